# Finds tandem's Debian-packaged dependencies and defines imported targets
# tandem_dep::<name>. Used by the build and by the installed package config
# (for tandem::tandem_static only: the shared library needs none of them).
# find_path/find_library (not pkg-config) so that CMAKE_PREFIX_PATH relocations
# such as an unpacked .deb tree work too.
# In the build a missing dependency is an error. With TANDEM_DEPS_QUIET set
# (the package config) nothing is fatal: TANDEM_DEPS_MISSING lists what was not
# found, and the caller decides.
set(TANDEM_DEPS_MISSING)

function(tandem_find_dep name header lib required)
  if(TARGET tandem_dep::${name})
    set(TANDEM_HAVE_${name} ON PARENT_SCOPE)
    return()
  endif()
  find_path(TANDEM_${name}_INCLUDE_DIR ${header})
  find_library(TANDEM_${name}_LIBRARY ${lib})
  if(TANDEM_${name}_INCLUDE_DIR AND TANDEM_${name}_LIBRARY)
    add_library(tandem_dep::${name} UNKNOWN IMPORTED)
    set_target_properties(tandem_dep::${name} PROPERTIES
      IMPORTED_LOCATION "${TANDEM_${name}_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${TANDEM_${name}_INCLUDE_DIR}")
    set(TANDEM_HAVE_${name} ON PARENT_SCOPE)
    return()
  endif()
  set(TANDEM_HAVE_${name} OFF PARENT_SCOPE)
  if(NOT required)
    return()
  endif()
  set(what "${name} (${header}, lib${lib})")
  if(NOT TANDEM_DEPS_QUIET)
    message(FATAL_ERROR "tandem needs ${what}: on Debian, "
                        "apt-get install the package that provides it (see README)")
  endif()
  set(TANDEM_DEPS_MISSING ${TANDEM_DEPS_MISSING} "${what}" PARENT_SCOPE)
endfunction()

if(TANDEM_DEPS_QUIET)
  find_package(OpenCL QUIET)
  find_package(Threads QUIET)
  if(NOT OpenCL_FOUND)
    list(APPEND TANDEM_DEPS_MISSING "OpenCL (CL/cl.h, libOpenCL)")
  endif()
  if(NOT Threads_FOUND)
    list(APPEND TANDEM_DEPS_MISSING "Threads")
  endif()
else()
  find_package(OpenCL REQUIRED)
  find_package(Threads REQUIRED)
endif()
tandem_find_dep(xxhash xxhash.h xxhash ON)
tandem_find_dep(stemmer libstemmer.h stemmer ON)
tandem_find_dep(protobufc protobuf-c/protobuf-c.h protobuf-c ON)
tandem_find_dep(zlib zlib.h z ON)
if(NOT TANDEM_DEPS_QUIET) # the CLI's, not the library's
  tandem_find_dep(streamvbyte streamvbyte.h streamvbyte OFF)
  tandem_find_dep(jansson jansson.h jansson ON) # search --json, serve
  # `tandem serve` (tools/serve*.c) is built only with libmicrohttpd
  tandem_find_dep(microhttpd microhttpd.h microhttpd OFF)
endif()
