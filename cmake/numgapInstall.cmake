# install() + export so that users can find_package(numgap CONFIG).
include(CMakePackageConfigHelpers)

set(NUMGAP_INSTALL_CMAKEDIR "${CMAKE_INSTALL_DATADIR}/cmake/numgap"
    CACHE STRING "Where numgap's CMake package files are installed")

install(TARGETS numgap EXPORT numgapTargets)
if(TARGET numgap_dispatch)
    install(TARGETS numgap_dispatch EXPORT numgapTargets ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}")
endif()
install(DIRECTORY include/numgap DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
install(EXPORT numgapTargets NAMESPACE numgap:: DESTINATION "${NUMGAP_INSTALL_CMAKEDIR}")

configure_package_config_file(cmake/numgapConfig.cmake.in
    "${PROJECT_BINARY_DIR}/numgapConfig.cmake"
    INSTALL_DESTINATION "${NUMGAP_INSTALL_CMAKEDIR}")
# Header-only unless numgap::dispatch (compiled code) is part of the package.
if(TARGET numgap_dispatch)
    set(numgap_arch_independent)
else()
    set(numgap_arch_independent ARCH_INDEPENDENT)
endif()
write_basic_package_version_file("${PROJECT_BINARY_DIR}/numgapConfigVersion.cmake"
    COMPATIBILITY SameMajorVersion ${numgap_arch_independent})
install(FILES "${PROJECT_BINARY_DIR}/numgapConfig.cmake" "${PROJECT_BINARY_DIR}/numgapConfigVersion.cmake"
    DESTINATION "${NUMGAP_INSTALL_CMAKEDIR}")
