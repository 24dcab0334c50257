#pragma once
// 8-bit code units: titles are UTF-8. Swift sees the width-suffixed names (pcre2_compile_8 …), since the
// unsuffixed ones are macros.
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
