# Embeds one text file into a generated C++ source as a function returning
# its bytes, so that the binary serves it with no file beside it:
#   cmake -DINPUT=web/dashboard.html -DOUTPUT=out.cc -DHEADER=serve/x.h
#         -DFUNCTION=strag::serve::DashboardHtml -P embed_text.cmake
# The text is cut into raw string literal pieces (adjacent literals
# concatenate); a file containing the delimiter `)strag_text"` is refused.
file(READ "${INPUT}" content)
string(FIND "${content}" ")strag_text\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${INPUT} contains the raw-string delimiter")
endif()
string(LENGTH "${content}" size)
set(pieces "")
set(pos 0)
while(pos LESS size)
  string(SUBSTRING "${content}" ${pos} 30000 piece)
  string(APPEND pieces "R\"strag_text(${piece})strag_text\"\n")
  math(EXPR pos "${pos} + 30000")
endwhile()
if(pieces STREQUAL "")
  set(pieces "\"\"")
endif()
string(REGEX REPLACE "::[^:]+$" "" ns "${FUNCTION}")
string(REGEX REPLACE "^.*::" "" fn "${FUNCTION}")
file(WRITE "${OUTPUT}.tmp"
  "// Generated from ${INPUT} by cmake/embed_text.cmake; do not edit.\n"
  "#include \"${HEADER}\"\n\nnamespace ${ns} {\n\n"
  "std::string_view ${fn}() {\n  static constexpr char kText[] =\n${pieces};\n"
  "  return std::string_view(kText, sizeof(kText) - 1);\n}\n\n}  // namespace ${ns}\n")
file(RENAME "${OUTPUT}.tmp" "${OUTPUT}")
