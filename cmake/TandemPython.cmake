# The Python wheel (python/pyproject.toml, scikit-build-core sets SKBUILD):
# libtandem goes into the package directory as tandem/libtandem.so (a plain
# file: wheels carry no symbolic links), with tandem/_build_config.py naming
# it and the project's version, all in the install component "python".

# libtandem must link the system's OpenCL ICD loader (libOpenCL.so.1 from
# ocl-icd), which dispatches to whichever drivers are installed, never one
# vendor's driver library directly.
get_target_property(_tdm_ocl OpenCL::OpenCL IMPORTED_LOCATION)
if(NOT _tdm_ocl)
  set(_tdm_ocl "${OpenCL_LIBRARY}")
endif()
get_filename_component(_tdm_ocl_real "${_tdm_ocl}" REALPATH)
get_filename_component(_tdm_ocl_name "${_tdm_ocl_real}" NAME)
if(NOT _tdm_ocl_name MATCHES "^libOpenCL\\.so")
  message(FATAL_ERROR "tandem wheel: OpenCL resolves to ${_tdm_ocl_real}, not the ICD "
                      "loader libOpenCL.so (Debian: apt-get install ocl-icd-opencl-dev)")
endif()

# What pyproject.toml's build.targets builds: "tandem" itself would name the
# CLI's output file (OUTPUT_NAME tandem) to Ninja, not the library.
add_custom_target(tandem_wheel DEPENDS tandem)
install(FILES $<TARGET_FILE:tandem> DESTINATION tandem RENAME libtandem.so
        COMPONENT python)
set(TANDEM_PY_CONFIG "${CMAKE_CURRENT_BINARY_DIR}/_build_config.py")
file(WRITE "${TANDEM_PY_CONFIG}"
     "\"\"\"Written by CMake (cmake/TandemPython.cmake) into the wheel.\"\"\"\n"
     "# The bundled library, next to this file.\n"
     "LIBRARY = \"libtandem.so\"\n"
     "VERSION = \"${PROJECT_VERSION}\"\n")
install(FILES "${TANDEM_PY_CONFIG}" DESTINATION tandem COMPONENT python)
