# Embeds kernels.cl into C: resolves its #include "cl/..." lines (recursively),
# then writes the text as a byte array so no compiler string limit applies.
# Usage: cmake -DROOT=<source dir> -DIN=kernels.cl -DOUT=<file.c> -P embed_cl.cmake
function(expand_includes path out_var depth)
  if(depth GREATER 8)
    message(FATAL_ERROR "embed_cl: includes nested too deep at ${path}")
  endif()
  file(READ "${ROOT}/${path}" text)
  string(REGEX MATCHALL "#include \"[^\"]+\"" incs "${text}")
  foreach(inc IN LISTS incs)
    string(REGEX REPLACE "#include \"([^\"]+)\"" "\\1" rel "${inc}")
    if(NOT EXISTS "${ROOT}/${rel}")
      message(FATAL_ERROR "embed_cl: ${path} includes ${rel}, which does not exist")
    endif()
    expand_includes("${rel}" sub "${depth} + 1")
    string(REPLACE "${inc}" "${sub}" text "${text}")
  endforeach()
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()


expand_includes("${IN}" src 0)
file(WRITE "${OUT}.cl" "${src}")
file(READ "${OUT}.cl" hex HEX)
string(LENGTH "${hex}" hexlen)
math(EXPR len "${hexlen} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}.tmp"
  "/* Generated from ${IN} by cmake/embed_cl.cmake: do not edit. */\n"
  "#include <stddef.h>\n"
  "const char tdm_kernels_source[] = {\n${bytes}0x00};\n"
  "const size_t tdm_kernels_source_len = ${len};\n")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
file(REMOVE "${OUT}.tmp")
