# Installs the build into a scratch prefix, then builds the README's C example
# against it twice: through find_package(tandem) and through pkg-config.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/src")
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
  message("${out}")
endfunction()

run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${WORK}/prefix")

# The example is the ```c block between the README's example markers.
file(READ "${SOURCE_DIR}/README.md" readme)
string(REGEX MATCH "<!-- example:begin -->[^`]*```c\n(.*)```[^`]*<!-- example:end -->" _ "${readme}")
if(NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "README.md has no example between <!-- example:begin/end --> markers")
endif()
file(WRITE "${WORK}/src/example.c" "${CMAKE_MATCH_1}")
file(COPY "${SOURCE_DIR}/tests/consumer/CMakeLists.txt" DESTINATION "${WORK}/src")

set(prefix_path "${WORK}/prefix")
if(DEFINED ENV{CMAKE_PREFIX_PATH})
  string(REPLACE ":" ";" extra "$ENV{CMAKE_PREFIX_PATH}")
  list(APPEND prefix_path ${extra})
endif()
string(REPLACE ";" "\\;" prefix_arg "${prefix_path}")
run("${CMAKE_COMMAND}" -S "${WORK}/src" -B "${WORK}/build" -G "${GENERATOR}"
    "-DCMAKE_PREFIX_PATH=${prefix_arg}")
run("${CMAKE_COMMAND}" --build "${WORK}/build")
run("${WORK}/build/example")
run("${WORK}/build/example_static")

# pkg-config: compile and run the same example with the flags it gives.
find_program(PKG_CONFIG pkg-config)
find_program(CC NAMES cc gcc clang)
if(PKG_CONFIG AND CC)
  set(ENV{PKG_CONFIG_PATH} "${WORK}/prefix/lib/pkgconfig:${WORK}/prefix/lib64/pkgconfig:$ENV{PKG_CONFIG_PATH}")
  execute_process(COMMAND "${PKG_CONFIG}" --cflags --libs tandem
                  OUTPUT_VARIABLE flags RESULT_VARIABLE rc ERROR_VARIABLE perr
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config tandem failed: ${perr}")
  endif()
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run("${CC}" "${WORK}/src/example.c" -o "${WORK}/example_pc" ${flags})
  set(ENV{LD_LIBRARY_PATH} "${WORK}/prefix/lib:$ENV{LD_LIBRARY_PATH}")
  run("${WORK}/example_pc")
endif()
