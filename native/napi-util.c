// The shared Node-API glue of imgpu's JPEG modules (napi-util.h says what each piece is for).
#include "napi-util.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// One argument read as `f` says (napi_util_args), into the next of `ap`'s pointers; 0 when it is not of that type.
static int read_arg(napi_env env, napi_value v, char f, va_list *ap) {
  switch (f) {
    case 'b': {
      unsigned char **data = va_arg(*ap, unsigned char **);
      return get_bytes(env, v, data, va_arg(*ap, size_t *));
    }
    case 'h': {
      void **data = va_arg(*ap, void **);
      return typed_array(env, v, napi_int16_array, data, va_arg(*ap, size_t *));
    }
    case 'i': return napi_get_value_int32(env, v, va_arg(*ap, int *)) == napi_ok;
    case 'z': return napi_get_value_bool(env, v, va_arg(*ap, bool *)) == napi_ok;
    default: return 0;
  }
}

size_t napi_util_args(napi_env env, napi_callback_info info, napi_value *argv, size_t max, const char *format, const char *usage, ...) {
  size_t argc = max, want = strlen(format);
  int ok = napi_get_cb_info(env, info, &argc, argv, NULL, NULL) == napi_ok && argc >= want;
  va_list ap;
  va_start(ap, usage);
  for (size_t i = 0; ok && i < want; i++) ok = read_arg(env, argv[i], format[i], &ap);
  va_end(ap);
  if (ok) return argc;
  napi_throw_type_error(env, NULL, usage);
  return 0;
}

napi_value napi_util_numbers(napi_env env, const char *const *keys, const double *values, int n) {
  napi_value obj, v;
  if (napi_create_object(env, &obj) != napi_ok) return NULL;
  for (int i = 0; i < n; i++)
    if (napi_create_double(env, values[i], &v) != napi_ok || napi_set_named_property(env, obj, keys[i], v) != napi_ok) return NULL;
  return obj;
}

napi_value napi_util_error(napi_env env, const char *code, const char *message) {
  napi_value c, m, err;
  if (napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &c) != napi_ok ||
      napi_create_string_utf8(env, message, NAPI_AUTO_LENGTH, &m) != napi_ok || napi_create_error(env, c, m, &err) != napi_ok)
    return NULL;
  return err;
}

// The finalizer of an external buffer: the hint is the release function (a function pointer carried as data, as
// POSIX allows).
static void release_buffer(napi_env env, void *data, void *hint) {
  (void)env;
  ((void (*)(void *))hint)(data);
}

napi_value napi_util_owned_buffer(napi_env env, void *data, size_t size, void (*release)(void *)) {
  napi_value out;
  if (napi_create_external_buffer(env, size, data, release_buffer, (void *)release, &out) == napi_ok) return out;
  void *copy;
  napi_status s = napi_create_buffer_copy(env, size, data, &copy, &out);
  release(data);
  return s == napi_ok ? out : NULL;
}

typedef struct {
  const napi_util_async_t *kind;
  void *job;
  int rc;
  napi_async_work work;
  napi_deferred deferred;
  napi_ref keep[NAPI_UTIL_MAX_KEEP];
} task_t;

static void task_execute(napi_env env, void *data) {
  (void)env;
  task_t *t = data;
  t->rc = t->kind->run(t->job);
}

static void task_complete(napi_env env, napi_status status, void *data) {
  task_t *t = data;
  napi_value result = NULL;
  if (status == napi_ok && t->rc == 0) {
    if (t->kind->resolve) result = t->kind->resolve(env, t->job);
    else napi_get_undefined(env, &result);
  }
  if (result) {
    napi_resolve_deferred(env, t->deferred, result);
  } else {
    const char *code = "EJPEG", *message = "work cancelled";
    if (status == napi_ok) t->kind->failure(t->job, &code, &message);
    napi_reject_deferred(env, t->deferred, napi_util_error(env, code, message));
  }
  for (int i = 0; i < NAPI_UTIL_MAX_KEEP; i++)
    if (t->keep[i]) napi_delete_reference(env, t->keep[i]);
  napi_delete_async_work(env, t->work);
  free(t->job);
  free(t);
}

// Throws "<name>: <what>" (the module's name first, as its other errors).
static void throw_named(napi_env env, const char *name, const char *what) {
  char msg[200];
  snprintf(msg, sizeof msg, "%s: %s", name, what);
  napi_throw_error(env, NULL, msg);
}

napi_value napi_util_queue(napi_env env, const napi_util_async_t *kind, void *job, const napi_value *keep, size_t n_keep) {
  task_t *t = n_keep <= NAPI_UTIL_MAX_KEEP ? calloc(1, sizeof *t) : NULL;
  napi_value promise, name;
  if (!t) {
    free(job);
    throw_named(env, kind->name, n_keep > NAPI_UTIL_MAX_KEEP ? "too many arrays to keep" : "out of memory");
    return NULL;
  }
  t->kind = kind;
  t->job = job;
  for (size_t i = 0; i < n_keep; i++)
    if (napi_create_reference(env, keep[i], 1, &t->keep[i]) != napi_ok) goto fail;
  if (napi_create_promise(env, &t->deferred, &promise) != napi_ok ||
      napi_create_string_utf8(env, kind->name, NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, task_execute, task_complete, t, &t->work) != napi_ok ||
      napi_queue_async_work(env, t->work) != napi_ok)
    goto fail;
  return promise;
fail:
  if (t->work) napi_delete_async_work(env, t->work);
  for (int i = 0; i < NAPI_UTIL_MAX_KEEP; i++)
    if (t->keep[i]) napi_delete_reference(env, t->keep[i]);
  free(job);
  free(t);
  throw_named(env, kind->name, "N-API failure");
  return NULL;
}
