# The install test: installs tandem in the two layouts a Debian machine has,
# /usr (libdir lib/<multiarch>, from a build configured with that prefix) and
# /usr/local (libdir lib, this build), each into its own staging root (DESTDIR),
# and builds the README's C example against each as a consumer would:
#  - through find_package(tandem) and through pkg-config, inside a root that
#    holds only the install, libtandem.so's run-time packages and the C
#    library (the compiler gets it as --sysroot; CMake and pkg-config search
#    only there): no xxhash, stemmer, protobuf-c, zlib or OpenCL development
#    files, so the shared library must need none of them; there
#    find_package(tandem COMPONENTS static) must fail and say why;
#  - through find_package and pkg-config (tandem.pc, tandem-static.pc) on the
#    whole system, shared and static: a static link must not need
#    libtandem.so (readelf -d: no DT_NEEDED; -ltandem would take the shared
#    library wherever both are installed).
# Every example built is run. The roots are built from `dpkg -L`; without dpkg
# only the whole-system part runs and the test reports skipped.
# Usage: cmake -DBUILD_DIR= -DSOURCE_DIR= -DWORK= -DGENERATOR= -DCC= -P run.cmake
foreach(v BUILD_DIR SOURCE_DIR WORK GENERATOR CC)
  if(NOT ${v})
    message(FATAL_ERROR "run.cmake needs -D${v}=")
  endif()
endforeach()
# ${WORK}/build-usr is kept between runs (rebuilt incrementally); the rest is fresh.
file(GLOB old "${WORK}/*")
list(REMOVE_ITEM old "${WORK}/build-usr")
if(old)
  file(REMOVE_RECURSE ${old})
endif()
file(MAKE_DIRECTORY "${WORK}/src")

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}")
  endif()
endfunction()

# The example is the ```c block between the README's example markers.
file(READ "${SOURCE_DIR}/README.md" readme)
string(REGEX MATCH "<!-- example:begin -->[^`]*```c\n(.*)```[^`]*<!-- example:end -->" _ "${readme}")
if(NOT CMAKE_MATCH_1)
  message(FATAL_ERROR "README.md has no example between <!-- example:begin/end --> markers")
endif()
file(WRITE "${WORK}/src/example.c" "${CMAKE_MATCH_1}")
file(COPY "${SOURCE_DIR}/tests/consumer/CMakeLists.txt" DESTINATION "${WORK}/src")

find_program(DPKG dpkg)
find_program(DPKG_QUERY dpkg-query)
find_program(LDD ldd)
find_program(PKG_CONFIG NAMES pkg-config pkgconf)
find_program(READELF NAMES readelf llvm-readelf)
set(have_roots OFF)
if(DPKG AND DPKG_QUERY AND LDD)
  set(have_roots ON)
endif()

# ---- the two installs
# /usr/local: this build, whose libdir must then be the plain one.
execute_process(COMMAND "${CMAKE_COMMAND}" -LA -N "${BUILD_DIR}" OUTPUT_VARIABLE cache)
string(REGEX MATCH "CMAKE_INSTALL_LIBDIR:PATH=([^\n]*)" _ "${cache}")
set(libdir_local "${CMAKE_MATCH_1}")
set(ENV{DESTDIR} "${WORK}/root-usr-local")
run("${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix /usr/local)
# /usr: a build configured with that prefix (GNUInstallDirs then picks
# Debian's lib/<multiarch>); only the library is built, unoptimised and
# without debug information (what is tested here is the packaging).
run("${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${WORK}/build-usr" -G "${GENERATOR}"
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS_DEBUG=-O0
    -DTANDEM_BUILD_TESTS=OFF "-DCMAKE_C_COMPILER=${CC}")
run("${CMAKE_COMMAND}" --build "${WORK}/build-usr" --parallel 2 --target tandem_libraries)
execute_process(COMMAND "${CMAKE_COMMAND}" -LA -N "${WORK}/build-usr" OUTPUT_VARIABLE cache)
string(REGEX MATCH "CMAKE_INSTALL_LIBDIR:PATH=([^\n]*)" _ "${cache}")
set(libdir_usr "${CMAKE_MATCH_1}")
set(ENV{DESTDIR} "${WORK}/root-usr")
foreach(comp runtime development)
  run("${CMAKE_COMMAND}" --install "${WORK}/build-usr" --component ${comp})
endforeach()
unset(ENV{DESTDIR})
message("layouts: /usr with libdir ${libdir_usr}, /usr/local with libdir ${libdir_local}")

# ---- a root with only libtandem.so's run-time dependencies
# Fills ${root} with links to the files of the Debian packages that provide
# the libraries libtandem.so loads (found with ldd and dpkg), and of the C
# library's development files (the compiler's, not tandem's).
function(make_runtime_root root lib)
  execute_process(COMMAND "${LDD}" "${lib}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "ldd ${lib} failed")
  endif()
  string(REGEX MATCHALL "=> (/[^ ]+)" paths "${out}")
  set(pkgs libc6-dev linux-libc-dev)
  foreach(p IN LISTS paths)
    string(REGEX REPLACE "^=> " "" p "${p}")
    if(p MATCHES "libtandem")
      continue()
    endif()
    # dpkg knows a file by the path its package ships (/lib or /usr/lib).
    string(REGEX REPLACE "^/usr/" "/" alt "${p}")
    if(alt STREQUAL p)
      set(alt "/usr${p}")
    endif()
    execute_process(COMMAND "${DPKG}" -S "${p}" OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
    if(NOT rc EQUAL 0)
      execute_process(COMMAND "${DPKG}" -S "${alt}" OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
    endif()
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "no Debian package owns ${p}, which ${lib} loads")
    endif()
    string(REGEX REPLACE ":.*" "" owner "${owner}")
    list(APPEND pkgs ${owner})
  endforeach()
  list(REMOVE_DUPLICATES pkgs)
  foreach(p IN LISTS pkgs)
    if(p MATCHES "-dev$" AND NOT p MATCHES "^(libc6|linux-libc)-dev$")
      message(FATAL_ERROR "libtandem.so loads a library from development package ${p}")
    endif()
  endforeach()
  message("runtime-only root ${root}: ${pkgs}")
  execute_process(COMMAND "${DPKG}" -L ${pkgs} OUTPUT_VARIABLE files RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "dpkg -L ${pkgs} failed")
  endif()
  string(REPLACE "\n" ";" files "${files}")
  foreach(f IN LISTS files)
    if(NOT f MATCHES "^/" OR IS_DIRECTORY "${f}" OR NOT EXISTS "${f}"
       OR f MATCHES "^/usr/share/(doc|man|lintian|locale)" OR EXISTS "${root}${f}")
      continue()
    endif()
    get_filename_component(dir "${root}${f}" DIRECTORY)
    file(MAKE_DIRECTORY "${dir}")
    file(CREATE_LINK "${f}" "${root}${f}" SYMBOLIC)
  endforeach()
  foreach(h xxhash.h libstemmer.h protobuf-c/protobuf-c.h zlib.h CL/cl.h)
    if(EXISTS "${root}/usr/include/${h}")
      message(FATAL_ERROR "the runtime-only root has ${h}")
    endif()
  endforeach()
endfunction()

# needs_libtandem(<exe> <want>): fails unless <exe> needs libtandem.so (a
# DT_NEEDED entry) exactly when <want> is ON.
function(needs_libtandem exe want)
  if(READELF)
    execute_process(COMMAND "${READELF}" -d "${exe}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
    set(re "\\(NEEDED\\)[^\n]*\\[libtandem\\.so")
  elseif(LDD)
    execute_process(COMMAND "${LDD}" "${exe}" OUTPUT_VARIABLE out RESULT_VARIABLE rc)
    set(re "libtandem\\.so")
  else()
    message("(no readelf or ldd: not checking what ${exe} links)")
    return()
  endif()
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d / ldd ${exe} failed")
  endif()
  if(out MATCHES "${re}")
    set(got ON)
  else()
    set(got OFF)
  endif()
  if(NOT got STREQUAL want)
    message(FATAL_ERROR "${exe}: needs libtandem.so is ${got}, expected ${want}:\n${out}")
  endif()
endfunction()

# pkg_config_link(<module> <out> [pkg-config options]): compiles the
# example with `pkg-config --cflags --libs <module>` into <out>.
function(pkg_config_link module out)
  execute_process(COMMAND "${PKG_CONFIG}" ${ARGN} --cflags --libs ${module}
                  OUTPUT_VARIABLE flags RESULT_VARIABLE rc ERROR_VARIABLE perr
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config ${ARGN} --cflags --libs ${module}: ${perr}")
  endif()
  set(pc_flags "${flags}" PARENT_SCOPE)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run("${CC}" "${WORK}/src/example.c" -o "${out}" ${flags})
endfunction()

# ---- a consumer per layout
# consume(<layout> <prefix> <libdir>): builds and runs the example against
# the install in root-<layout>.
function(consume layout prefix libdir)
  set(root "${WORK}/root-${layout}")
  set(b "${WORK}/consumer-${layout}")
  # Whole system (every development package there): shared and static.
  run("${CMAKE_COMMAND}" -S "${WORK}/src" -B "${b}-system" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_PREFIX_PATH=${root}${prefix}" -DEXPECT_STATIC=ON)
  run("${CMAKE_COMMAND}" --build "${b}-system")
  run("${b}-system/example")
  run("${b}-system/example_static")
  needs_libtandem("${b}-system/example" ON)
  needs_libtandem("${b}-system/example_static" OFF)
  # pkg-config on the whole system, this install's .pc files first.
  if(PKG_CONFIG)
    set(ENV{PKG_CONFIG_PATH} "${root}${prefix}/${libdir}/pkgconfig")
    unset(ENV{PKG_CONFIG_LIBDIR})
    pkg_config_link(tandem "${b}-system-pc")
    set(ENV{LD_LIBRARY_PATH} "${root}${prefix}/${libdir}")
    run("${b}-system-pc")
    unset(ENV{LD_LIBRARY_PATH})
    needs_libtandem("${b}-system-pc" ON)
    # the static library, also as `pkg-config --static` users ask for it
    foreach(opt "" --static)
      set(exe "${b}-system-pc-static${opt}")
      pkg_config_link(tandem-static "${exe}" ${opt})
      if(NOT pc_flags MATCHES "libtandem\\.a" OR pc_flags MATCHES "-ltandem( |$)")
        message(FATAL_ERROR "pkg-config ${opt} --libs tandem-static: ${pc_flags}")
      endif()
      run("${exe}")
      needs_libtandem("${exe}" OFF)
    endforeach()
    unset(ENV{PKG_CONFIG_PATH})
  endif()
  if(NOT have_roots)
    return()
  endif()
  make_runtime_root("${root}" "${root}${prefix}/${libdir}/libtandem.so")
  # find_package inside the root: found where a system install would be
  # (no hint), and nothing outside the root is searched.
  set(tc "${WORK}/toolchain-${layout}.cmake")
  file(WRITE "${tc}" "set(CMAKE_SYSROOT \"${root}\")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
")
  run("${CMAKE_COMMAND}" -S "${WORK}/src" -B "${b}-root" -G "${GENERATOR}"
      "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_TOOLCHAIN_FILE=${tc}" -DEXPECT_STATIC=OFF)
  run("${CMAKE_COMMAND}" --build "${b}-root")
  # (no run path: the root's libdir is a default one of the sysroot)
  set(ENV{LD_LIBRARY_PATH} "${root}${prefix}/${libdir}")
  run("${b}-root/example")
  unset(ENV{LD_LIBRARY_PATH})
  # Asking for the static library there fails, naming what is missing.
  execute_process(COMMAND "${CMAKE_COMMAND}" -S "${WORK}/src" -B "${b}-root-static"
                  -G "${GENERATOR}" "-DCMAKE_C_COMPILER=${CC}" "-DCMAKE_TOOLCHAIN_FILE=${tc}"
                  -DTANDEM_COMPONENTS=static
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0 OR NOT out MATCHES "component static .*needs .*xxhash")
    message(FATAL_ERROR "find_package(tandem COMPONENTS static) in a root without "
                        "the development packages: expected a failure naming them, got (${rc}):\n${out}")
  endif()
  # pkg-config inside the root: its default search path, re-rooted.
  if(PKG_CONFIG)
    execute_process(COMMAND "${PKG_CONFIG}" --variable pc_path pkg-config
                    OUTPUT_VARIABLE pc_path OUTPUT_STRIP_TRAILING_WHITESPACE)
    if(NOT pc_path)
      set(pc_path "/usr/local/lib/pkgconfig:/usr/lib/${libdir}/pkgconfig:/usr/lib/pkgconfig")
    endif()
    string(REPLACE ":" ";" pc_path "${pc_path}")
    set(rooted)
    foreach(d IN LISTS pc_path)
      list(APPEND rooted "${root}${d}")
    endforeach()
    string(REPLACE ";" ":" rooted "${rooted}")
    set(ENV{PKG_CONFIG_LIBDIR} "${rooted}")
    unset(ENV{PKG_CONFIG_PATH})
    unset(ENV{PKG_CONFIG_SYSROOT_DIR})
    foreach(q cflags libs)
      execute_process(COMMAND "${PKG_CONFIG}" --${q} tandem OUTPUT_VARIABLE ${q}
                      RESULT_VARIABLE rc ERROR_VARIABLE perr OUTPUT_STRIP_TRAILING_WHITESPACE)
      if(NOT rc EQUAL 0)
        message(FATAL_ERROR "pkg-config --${q} tandem in ${root}: ${perr}")
      endif()
    endforeach()
    # The sysroot's default paths would hide wrong -I/-L: check them first.
    foreach(v includedir libdir)
      execute_process(COMMAND "${PKG_CONFIG}" --variable ${v} tandem
                      OUTPUT_VARIABLE ${v}_pc OUTPUT_STRIP_TRAILING_WHITESPACE)
    endforeach()
    get_filename_component(inc "${includedir_pc}" REALPATH)
    get_filename_component(lib "${libdir_pc}" REALPATH)
    if(NOT inc STREQUAL "${root}${prefix}/include" OR NOT EXISTS "${inc}/tandem.h")
      message(FATAL_ERROR "pkg-config: includedir ${includedir_pc} is not ${root}${prefix}/include")
    endif()
    if(NOT lib STREQUAL "${root}${prefix}/${libdir}" OR NOT EXISTS "${lib}/libtandem.so")
      message(FATAL_ERROR "pkg-config: libdir ${libdir_pc} is not ${root}${prefix}/${libdir}")
    endif()
    separate_arguments(flags UNIX_COMMAND "${cflags} ${libs}")
    run("${CC}" "--sysroot=${root}" "${WORK}/src/example.c" -o "${b}-example_pc" ${flags})
    set(ENV{LD_LIBRARY_PATH} "${root}${prefix}/${libdir}")
    run("${b}-example_pc")
    unset(ENV{LD_LIBRARY_PATH})
    unset(ENV{PKG_CONFIG_LIBDIR})
  endif()
  message("${layout}: consumers built and ran")
endfunction()

consume(usr /usr "${libdir_usr}")
consume(usr-local /usr/local "${libdir_local}")
if(NOT have_roots)
  message("tandem-test-skipped: no dpkg/ldd to build a root with only the run-time "
          "packages; the whole-system consumers built and ran")
elseif(NOT PKG_CONFIG)
  message("tandem-test-skipped: no pkg-config; the CMake consumers built and ran")
endif()
