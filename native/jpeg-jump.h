// libjpeg's errors for the modules on its own API (coef-decode.c, coef-encode.c): a longjmp back to the caller
// with the message kept, instead of libjpeg's default (print and exit the process).
#ifndef IMGPU_JPEG_JUMP_H
#define IMGPU_JPEG_JUMP_H
#include <setjmp.h>
#include <stdio.h>
#include <jpeglib.h>

typedef struct {
  struct jpeg_error_mgr pub;
  jmp_buf jump;
  char msg[JMSG_LENGTH_MAX];
} jump_error_t;

static inline void jump_on_error(j_common_ptr c) {
  jump_error_t *e = (jump_error_t *)c->err;
  c->err->format_message(c, e->msg);
  longjmp(e->jump, 1);
}

static inline void jump_on_warning(j_common_ptr c, int level) {
  if (level < 0) jump_on_error(c);
}

static inline void jump_ignore_messages(j_common_ptr c, int level) {
  (void)c;
  (void)level;
}

// e's manager, for cinfo->err: errors jump to e->jump (setjmp it before libjpeg runs), with e->msg set; warnings
// (level < 0) do too where `fatal_warnings`, else they and trace messages are ignored.
static inline struct jpeg_error_mgr *jump_errors(jump_error_t *e, int fatal_warnings) {
  jpeg_std_error(&e->pub);
  e->pub.error_exit = jump_on_error;
  e->pub.emit_message = fatal_warnings ? jump_on_warning : jump_ignore_messages;
  return &e->pub;
}
#endif
