// The Node-API glue shared by imgpu's JPEG modules (turbo.c, coef-decode.c, coef-encode.c) and copy.c (napi-util.c, compiled
// into each): work queued on libuv's threads behind a promise, results handed to JavaScript as Buffers, errors with
// a code, arguments read and checked by a format.
#ifndef IMGPU_NAPI_UTIL_H
#define IMGPU_NAPI_UTIL_H
#include <node_api.h>
#include "common.h"

// Not exported from the module (each .node carries its own copy).
#define NAPI_UTIL_API __attribute__((visibility("hidden")))

// The call's arguments (up to `max`, into argv; their count returned), the first strlen(format) of them required and
// read by `format`, a character each: 'b' a Uint8Array (unsigned char **data, size_t *length), 'h' an Int16Array
// (void **data, size_t *count), 'i' an int32 (int *), 'z' a boolean (bool *). 0 with a TypeError `usage` thrown
// when one is missing or of another type.
NAPI_UTIL_API size_t napi_util_args(napi_env env, napi_callback_info info, napi_value *argv, size_t max, const char *format,
                                    const char *usage, ...);

// A new object { keys[i]: values[i] } of `n` numbers, or NULL on failure.
NAPI_UTIL_API napi_value napi_util_numbers(napi_env env, const char *const *keys, const double *values, int n);

// An Error with `code` and `message`, or NULL where even that fails.
NAPI_UTIL_API napi_value napi_util_error(napi_env env, const char *code, const char *message);

// `size` bytes at `data` (malloc'd by a library) as a Buffer: handed over without a copy where the runtime allows
// external buffers (`release(data)` runs when it is collected), else copied and released now. NULL on failure.
NAPI_UTIL_API napi_value napi_util_owned_buffer(napi_env env, void *data, size_t size, void (*release)(void *));

// What a module's asynchronous work is: its name, the work (run on a libuv thread, free of JavaScript values: 0, or
// nonzero on failure), the promise's value when it succeeded (NULL: undefined; a NULL result from `resolve` rejects),
// and the error's code and message when it failed.
typedef struct {
  const char *name;
  int (*run)(void *job);
  napi_value (*resolve)(napi_env env, void *job);
  void (*failure)(void *job, const char **code, const char **message);
} napi_util_async_t;

// The JavaScript arrays a job holds (referenced, kept alive, until its promise settles).
#define NAPI_UTIL_MAX_KEEP 2

// Queues `kind`'s work on `job` (malloc'd; owned from here, freed when the promise settles or on failure) and
// returns its promise, referencing keep[0..n_keep) meanwhile: none of them may be detached (a mapped GPU range
// unmapped) before the promise settles. NULL with an error thrown when it cannot be queued.
NAPI_UTIL_API napi_value napi_util_queue(napi_env env, const napi_util_async_t *kind, void *job, const napi_value *keep, size_t n_keep);
#endif
