# Finds numgap's dependencies, all from Debian packages; a missing one stops
# the configure step with the package that provides it.
include(GNUInstallDirs)

macro(numgap_require package debian_package)
    find_package(${package} ${ARGN} QUIET CONFIG)
    if(NOT ${package}_FOUND)
        message(FATAL_ERROR
            "numgap needs ${package}, which was not found. On Debian/Ubuntu install it with:\n"
            "    sudo apt-get install ${debian_package}\n"
            "or run cmake/install-deps.sh, which installs everything numgap needs.")
    endif()
endmacro()

set(THREADS_PREFER_PTHREAD_FLAG ON)
find_package(Threads REQUIRED)
numgap_require(xsimd libxsimd-dev)
numgap_require(xtensor xtensor-dev)
