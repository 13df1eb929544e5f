# graphcInstall.cmake — what `cmake --install` puts under the prefix (included by
# the top-level CMakeLists.txt when GRAPHC_INSTALL is on):
#
#   bin/graphc                                  the compiler (imported as graphc::compiler)
#   include/graphc/*.h                          the public C API
#   LIBDIR/libgraphc.a                          the library (graphc::graphc; links -lm)
#   LIBDIR/pkgconfig/graphc.pc                  pkg-config --cflags --libs graphc
#   LIBDIR/cmake/graphc/graphcConfig.cmake      find_package(graphc): the targets above and
#                       graphcConfigVersion.cmake   graphc_add_model() (graphcModel.cmake)
#                       graphcTargets*.cmake
#                       graphcModel.cmake
#
# Every installed file locates the others relative to itself (the CMake files
# through CMAKE_CURRENT_LIST_DIR, graphc.pc through pkg-config's ${pcfiledir}),
# so the tree works wherever it lands: `cmake --install build --prefix DIR`
# with any DIR, or a copy of DIR moved elsewhere.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(GRAPHC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/graphc)
set(GRAPHC_PKGCONFIG_DIR ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

install(TARGETS graphc graphc_core EXPORT graphcTargets
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/graphc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(EXPORT graphcTargets NAMESPACE graphc:: DESTINATION ${GRAPHC_CMAKE_DIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/graphcConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/graphcConfig.cmake
                              INSTALL_DESTINATION ${GRAPHC_CMAKE_DIR})
# 0.x: a minor release may change the API, so only the same major.minor matches.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/graphcConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/graphcConfig.cmake ${PROJECT_BINARY_DIR}/graphcConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/graphcModel.cmake
        DESTINATION ${GRAPHC_CMAKE_DIR})

# graphc.pc finds the prefix from its own folder: LIBDIR/pkgconfig -> prefix.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" OR IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  message(FATAL_ERROR "graphc: CMAKE_INSTALL_LIBDIR and CMAKE_INSTALL_INCLUDEDIR must be relative to the prefix")
endif()
file(RELATIVE_PATH GRAPHC_PC_TO_PREFIX /prefix/${GRAPHC_PKGCONFIG_DIR} /prefix)
string(REGEX REPLACE "/$" "" GRAPHC_PC_TO_PREFIX "${GRAPHC_PC_TO_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/graphc.pc.in ${PROJECT_BINARY_DIR}/graphc.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/graphc.pc DESTINATION ${GRAPHC_PKGCONFIG_DIR})
