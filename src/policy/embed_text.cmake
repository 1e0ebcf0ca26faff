# Writes the text file IN as a C++ raw string literal into OUT (included by profile.cpp), so the
# built-in profile stays a readable text file in the source tree.
file(READ "${IN}" text)
string(FIND "${text}" ")gofl_text\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${IN} contains the raw-string delimiter )gofl_text\"")
endif()
file(WRITE "${OUT}.tmp" "// Generated from ${IN} by embed_text.cmake; edit that file instead.\nR\"gofl_text(${text})gofl_text\"\n")
file(RENAME "${OUT}.tmp" "${OUT}")
