# Finds tandem's Debian-packaged dependencies and defines imported targets
# tandem_dep::<name>. Used by the build and by the installed package config.
# find_path/find_library (not pkg-config) so that CMAKE_PREFIX_PATH relocations
# such as an unpacked .deb tree work too.
find_package(OpenCL REQUIRED)

function(tandem_find_dep name header lib required)
  if(TARGET tandem_dep::${name})
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
  elseif(required)
    message(FATAL_ERROR "tandem needs ${name} (${header}, lib${lib}): on Debian, "
                        "apt-get install the package that provides it (see README)")
  else()
    set(TANDEM_HAVE_${name} OFF PARENT_SCOPE)
  endif()
endfunction()

tandem_find_dep(xxhash xxhash.h xxhash ON)
tandem_find_dep(stemmer libstemmer.h stemmer ON)
tandem_find_dep(protobufc protobuf-c/protobuf-c.h protobuf-c ON)
tandem_find_dep(zlib zlib.h z ON)
tandem_find_dep(streamvbyte streamvbyte.h streamvbyte OFF)
find_package(Threads REQUIRED)
