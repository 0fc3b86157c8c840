// Dawn prints notices from native code straight to the process's stderr (file descriptor 2): two lines each time it
// reads a Vulkan adapter's limits ("maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to
// 16 …", Dawn's NormalizeLimits, run while an adapter is requested — before any limit imgpu could ask for), so on
// every GPU command. JavaScript cannot redirect a file descriptor: these two functions send fd 2 to a temporary
// file around such a call (src/node/gpu.ts), which then writes back everything but the known notices.
#include <node_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "module.h"

// Longest capture handed back; the rest of an unexpectedly long one is dropped.
#define MAX_CAPTURE (1 << 20)

static int saved_fd = -1;  // the real stderr while capturing
static FILE *sink = NULL;  // where fd 2 goes meanwhile

// stderrCaptureBegin(): true when fd 2 now goes to a temporary file (until stderrCaptureEnd); false when it cannot
// (no temporary file, or a capture is already running), and then nothing changed.
static napi_value capture_begin(napi_env env, napi_callback_info info) {
  int ok = 0;
  if (saved_fd < 0 && (sink = tmpfile()) != NULL) {
    fflush(stderr);
    saved_fd = dup(2);
    if (saved_fd >= 0 && dup2(fileno(sink), 2) >= 0) {
      ok = 1;
    } else {
      if (saved_fd >= 0) close(saved_fd);
      saved_fd = -1;
      fclose(sink);
      sink = NULL;
    }
  }
  napi_value result;
  napi_get_boolean(env, ok, &result);
  return result;
}

// stderrCaptureEnd(): fd 2 restored; returns what was written to it since stderrCaptureBegin ('' if not capturing).
static napi_value capture_end(napi_env env, napi_callback_info info) {
  char *text = NULL;
  size_t len = 0;
  if (saved_fd >= 0) {
    fflush(stderr);
    dup2(saved_fd, 2);
    close(saved_fd);
    saved_fd = -1;
    // fd 2 shared the sink's file offset: it stands at the end of what was written.
    long end = fseek(sink, 0, SEEK_END) == 0 ? ftell(sink) : 0;
    len = end > 0 ? (end > MAX_CAPTURE ? MAX_CAPTURE : (size_t)end) : 0;
    if (len && (text = malloc(len)) != NULL) {
      rewind(sink);
      len = fread(text, 1, len, sink);
    } else {
      len = 0;
    }
    fclose(sink);
    sink = NULL;
  }
  napi_value result;
  napi_create_string_utf8(env, text ? text : "", len, &result);
  free(text);
  return result;
}

// Adds this file's functions to the module's exports (module.c).
int imgpu_stderr_exports(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
      {"stderrCaptureBegin", NULL, capture_begin, NULL, NULL, NULL, napi_default, NULL},
      {"stderrCaptureEnd", NULL, capture_end, NULL, NULL, NULL, napi_default, NULL},
  };
  return napi_define_properties(env, exports, sizeof props / sizeof *props, props) == napi_ok;
}
