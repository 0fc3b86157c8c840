// imgpu-native.node: the host copies (copy.c) and the 8-bit point passes (point.c), the colour conversions (colour.c), CLAHE's interpolation (clahe.c) in one Node-API module, so that
// they share one pool of native threads (pool.c); and the capture of Dawn's notices on stderr (stderr.c). The JPEG codec is a module of its own (turbo.c): it needs
// libturbojpeg, this needs only a C compiler.
#include "module.h"

NAPI_MODULE_INIT() {
  if (!imgpu_copy_exports(env, exports) || !imgpu_point_exports(env, exports) || !imgpu_colour_exports(env, exports) || !imgpu_clahe_exports(env, exports) || !imgpu_stderr_exports(env, exports)) return NULL;
  return exports;
}
