// The parts of imgpu-native.node, each adding its functions to the exports; 0 on failure.
#ifndef IMGPU_NATIVE_MODULE_H
#define IMGPU_NATIVE_MODULE_H
#include <node_api.h>

int imgpu_copy_exports(napi_env env, napi_value exports);
int imgpu_point_exports(napi_env env, napi_value exports);
int imgpu_colour_exports(napi_env env, napi_value exports);
int imgpu_clahe_exports(napi_env env, napi_value exports);
int imgpu_stderr_exports(napi_env env, napi_value exports);
#endif
