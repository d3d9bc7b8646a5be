/*
** gen_cxx.c -- the C++17 wrapper (--emit=cxx): NAME.hpp. Not written yet.
*/
#include "gen.h"

void gen_cxx(GenUnit *u, Buf *b) {
  (void)b;
  diag_plain(u->cc, "--emit=cxx: the C++ wrapper is not available in this build yet");
}
