# Cross toolchain for Debian ARM targets (make tools ARCH=arm|arm64):
#   cmake -S tools -B build/tools-arm -DCMAKE_TOOLCHAIN_FILE=$PWD/tools/cmake/cross.cmake \
#         -DPPKIT_TRIPLET=arm-linux-gnueabihf -DPPKIT_SYSROOT=$(scripts/tools/sysroot.sh arm)
# The compilers are Debian's g++-<triplet>, whose libc and libstdc++ live in
# /usr/<triplet>; every other library and header comes from PPKIT_SYSROOT, the
# target's Debian packages unpacked by scripts/tools/sysroot.sh.  The host's
# /usr/include and /usr/lib are never searched.  Unit tests are not built.
set(CMAKE_SYSTEM_NAME Linux)
if(NOT PPKIT_TRIPLET OR NOT PPKIT_SYSROOT)
  message(FATAL_ERROR "cross.cmake needs -DPPKIT_TRIPLET=... -DPPKIT_SYSROOT=...")
endif()
# try_compile() projects read this file again: hand them the same values.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES PPKIT_TRIPLET PPKIT_SYSROOT)
string(REGEX REPLACE "-.*" "" CMAKE_SYSTEM_PROCESSOR ${PPKIT_TRIPLET})

set(CMAKE_C_COMPILER ${PPKIT_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${PPKIT_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${PPKIT_TRIPLET})

set(CMAKE_FIND_ROOT_PATH ${PPKIT_SYSROOT} /usr/${PPKIT_TRIPLET})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# pkg-config: only the sysroot's .pc files, with their paths under it.
set(ENV{PKG_CONFIG_LIBDIR}
    ${PPKIT_SYSROOT}/usr/lib/${PPKIT_TRIPLET}/pkgconfig:${PPKIT_SYSROOT}/usr/share/pkgconfig)
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} ${PPKIT_SYSROOT})

# GCC's notes that the ARM EABI passing of some types changed in GCC 7.1 only
# matter when mixing objects built by GCC < 7: everything here is GCC 12.
if(CMAKE_SYSTEM_PROCESSOR STREQUAL "arm")
  set(CMAKE_CXX_FLAGS_INIT "-Wno-psabi")
endif()

# Shared libraries that the linked ones need in turn (libnl-genl -> libnl).
set(CMAKE_EXE_LINKER_FLAGS_INIT
    "-Wl,-rpath-link,${PPKIT_SYSROOT}/lib/${PPKIT_TRIPLET}:${PPKIT_SYSROOT}/usr/lib/${PPKIT_TRIPLET}")
