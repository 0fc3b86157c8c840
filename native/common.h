// Helpers shared by imgpu's Node-API modules.
#ifndef IMGPU_NATIVE_COMMON_H
#define IMGPU_NATIVE_COMMON_H
#include <node_api.h>
#include <stddef.h>

// A loop function compiled at -O3 and, on x86-64 with glibc, also for AVX2 (target_clones: the CPU picks the version
// at load through an ifunc, which musl lacks): the vectorizer then does what the baseline build's SSE2 cannot
// (colour.c, clahe.c).
#include <stdint.h> // with glibc, defines __GLIBC__
#if defined(__x86_64__) && defined(__GLIBC__)
#define VECTORIZE __attribute__((target_clones("avx2", "default"), optimize("O3")))
#else
#define VECTORIZE __attribute__((optimize("O3")))
#endif

// The data and element count of a typed array of type `want` (any backing: ArrayBuffer, SharedArrayBuffer, a
// mapped GPU range); 0 when `v` is something else.
static inline int typed_array(napi_env env, napi_value v, napi_typedarray_type want, void **data, size_t *len) {
  bool is;
  napi_typedarray_type t;
  napi_value ab;
  size_t off;
  if (napi_is_typedarray(env, v, &is) != napi_ok || !is) return 0;
  if (napi_get_typedarray_info(env, v, &t, len, data, &ab, &off) != napi_ok || t != want) return 0;
  return 1;
}

// A Uint8Array's bytes.
static inline int get_bytes(napi_env env, napi_value v, unsigned char **data, size_t *len) {
  void *p;
  if (!typed_array(env, v, napi_uint8_array, &p, len)) return 0;
  *data = p;
  return 1;
}
#endif
