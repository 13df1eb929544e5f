# graphcModel.cmake — graphc_add_model(): a model compiled by graphc at build
# time into a static library target.
#
#   graphc_add_model(<target> <model.onnx | model.gir>
#                    [NAME <name>]          C prefix and file stem of the generated code
#                                           (default: the model's file stem with every
#                                           character outside [A-Za-z0-9_] made '_', as
#                                           `graphc compile` names it)
#                    [OUTPUT_DIR <dir>]     where graphc writes the folder (default:
#                                           ${CMAKE_CURRENT_BINARY_DIR}/graphc_models/<target>)
#                    [OPTIONS <option>...]  more `graphc compile` options: -O0,
#                                           --max-threads=1, --weights=c-array, --train, ...
#                    [OPS <file.c>...]      user operators (graphc --ops, see the README's
#                                           "Custom operators"): passed as --ops in order;
#                                           the compile reruns when one changes, and the
#                                           library compiles the copies graphc writes
#                    [DEPENDS <file>...]    more files the compile reads (ONNX external
#                                           data), so that it reruns on them
#                    [CPU_FLAGS <flag>...]  instruction-set flags for the fast kernels
#                                           (default: -march=native when not cross-compiling
#                                           and the compiler takes it; CPU_FLAGS with no
#                                           flag: the portable C kernels)
#                    [THREAD_POOL]          also compile the bundled pthread pool
#                                           (gc_thread_pool.c) into <target> and link
#                                           Threads::Threads; one per program
#                    [BLAS])                OpenBLAS for the GEMMs that have no fast kernel
#                                           (-DGCRT_USE_BLAS; links openblas)
#
# The build runs `graphc compile <model> -o <dir> --name <name> <options>`
# whenever the model, a DEPENDS file or graphc itself changes, and compiles
# <name>.c (which #includes the runtime sources graphc copied beside it) and
# the weights (<name>_weights.S, which pulls in <name>_weights.bin with the
# assembler's .incbin, compiled by the C compiler so the project needs no ASM
# language; or <name>_weights.c with --weights=c-array; nothing with
# --weights=file, whose <name>.weights the program loads) into the static
# library <target>. Its PUBLIC include directory is <dir>, so code linking it
# does `#include "<name>.h"`; it links libm (plus Threads::Threads, openblas
# when asked). The target's properties GRAPHC_MODEL_NAME and
# GRAPHC_OUTPUT_DIR give the name and the folder.
#
# graphc::compiler must exist: find_package(graphc) or add_subdirectory(graphc)
# defines it. The generated folder also holds <name>.cmake, which defines the
# same kind of target from a folder compiled once by hand (no graphc needed).
include_guard(GLOBAL)
include(CheckCCompilerFlag)

function(graphc_add_model target model)
  cmake_parse_arguments(PARSE_ARGV 2 GM "THREAD_POOL;BLAS" "NAME;OUTPUT_DIR" "OPTIONS;OPS;DEPENDS;CPU_FLAGS")
  if(GM_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "graphc_add_model(${target}): unexpected arguments: ${GM_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET graphc::compiler)
    message(FATAL_ERROR "graphc_add_model(${target}): no graphc::compiler target; "
                        "call find_package(graphc) or add_subdirectory(<graphc source>) first")
  endif()

  get_filename_component(model "${model}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
  if(DEFINED GM_NAME)
    set(name "${GM_NAME}")
  else()
    get_filename_component(name "${model}" NAME_WLE)
    string(REGEX REPLACE "[^A-Za-z0-9_]" "_" name "${name}")
  endif()
  if(NOT name MATCHES "^[A-Za-z_][A-Za-z0-9_]*$")
    message(FATAL_ERROR "graphc_add_model(${target}): model name '${name}' is not a C identifier; pass NAME <name>")
  endif()
  if(DEFINED GM_OUTPUT_DIR)
    get_filename_component(dir "${GM_OUTPUT_DIR}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_BINARY_DIR}")
  else()
    set(dir "${CMAKE_CURRENT_BINARY_DIR}/graphc_models/${target}")
  endif()

  # The weights mode decides the weights source; the name and folder are ours.
  set(weights incbin)
  set(next_is_weights OFF)
  foreach(opt IN LISTS GM_OPTIONS)
    if(next_is_weights)
      set(weights "${opt}")
      set(next_is_weights OFF)
    elseif(opt STREQUAL "--weights")
      set(next_is_weights ON)
    elseif(opt MATCHES "^--weights=(.*)$")
      set(weights "${CMAKE_MATCH_1}")
    elseif(opt MATCHES "^(-o|--name)(=.*)?$")
      message(FATAL_ERROR "graphc_add_model(${target}): pass the name as NAME and the folder as OUTPUT_DIR, not '${opt}' in OPTIONS")
    elseif(opt MATCHES "^--target=(.*)$" AND NOT CMAKE_MATCH_1 STREQUAL "c")
      message(FATAL_ERROR "graphc_add_model(${target}): only the C backend (--target=c) builds a library target")
    endif()
  endforeach()

  set(outputs "${dir}/${name}.c" "${dir}/${name}.h" "${dir}/${name}.pc" "${dir}/${name}.cmake"
              "${dir}/gcrt_base.h" "${dir}/gc_thread_pool.h" "${dir}/gc_thread_pool.c")
  set(sources "${dir}/${name}.c")
  if(weights STREQUAL "incbin")
    if(WIN32 OR APPLE OR NOT CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
      message(FATAL_ERROR "graphc_add_model(${target}): the default weights are an ELF assembler file for GCC or "
                          "Clang; pass OPTIONS --weights=c-array for this toolchain")
    endif()
    list(APPEND outputs "${dir}/${name}_weights.S" "${dir}/${name}_weights.bin")
    list(APPEND sources "${dir}/${name}_weights.S")
    # The C compiler driver assembles it; -x keeps it from being read as C when
    # CMake passes -x c for LANGUAGE C (policy CMP0119). .incbin finds the .bin
    # through the include directory below.
    set_source_files_properties("${dir}/${name}_weights.S" PROPERTIES
                                LANGUAGE C COMPILE_OPTIONS "-x;assembler-with-cpp"
                                OBJECT_DEPENDS "${dir}/${name}_weights.bin")
  elseif(weights STREQUAL "c-array")
    list(APPEND outputs "${dir}/${name}_weights.c")
    list(APPEND sources "${dir}/${name}_weights.c")
  elseif(weights STREQUAL "file")
    list(APPEND outputs "${dir}/${name}.weights")
  else()
    message(FATAL_ERROR "graphc_add_model(${target}): unknown --weights mode '${weights}' (expected incbin, c-array or file)")
  endif()
  if(GM_THREAD_POOL)
    list(APPEND sources "${dir}/gc_thread_pool.c")
  endif()

  set(ops_args "")
  set(ops_files "")
  foreach(f IN LISTS GM_OPS)
    get_filename_component(f "${f}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND ops_args --ops "${f}")
    list(APPEND ops_files "${f}")
  endforeach()

  # graphc replaces the folder as a whole (the Makefile it writes marks it as
  # graphc's, and is left out of the outputs so that `clean` keeps it).
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND $<TARGET_FILE:graphc::compiler> compile "${model}" -o "${dir}" --name "${name}" ${ops_args} ${GM_OPTIONS}
    DEPENDS "${model}" graphc::compiler ${ops_files} ${GM_DEPENDS}
    COMMENT "graphc: compiling ${model} into ${dir}"
    VERBATIM)

  add_library(${target} STATIC ${sources})
  target_include_directories(${target} PUBLIC "${dir}")
  if(NOT WIN32)
    target_link_libraries(${target} PUBLIC m)
  endif()
  set_target_properties(${target} PROPERTIES POSITION_INDEPENDENT_CODE ON
                        GRAPHC_MODEL_NAME "${name}" GRAPHC_OUTPUT_DIR "${dir}")
  if(NOT DEFINED CMAKE_C_STANDARD)
    set_target_properties(${target} PROPERTIES C_STANDARD 99)
  endif()

  if("CPU_FLAGS" IN_LIST GM_KEYWORDS_MISSING_VALUES)
    set(cpu_flags "")
  elseif(DEFINED GM_CPU_FLAGS)
    set(cpu_flags ${GM_CPU_FLAGS})
  else()
    set(cpu_flags "")
    if(NOT CMAKE_CROSSCOMPILING)
      check_c_compiler_flag(-march=native GRAPHC_C_HAS_MARCH_NATIVE)
      if(GRAPHC_C_HAS_MARCH_NATIVE)
        set(cpu_flags -march=native)
      endif()
    endif()
  endif()
  target_compile_options(${target} PRIVATE ${cpu_flags})

  if(GM_THREAD_POOL)
    find_package(Threads REQUIRED)
    target_link_libraries(${target} PUBLIC Threads::Threads)
  endif()
  if(GM_BLAS)
    find_package(PkgConfig QUIET)
    if(PKG_CONFIG_FOUND)
      pkg_check_modules(GRAPHC_OPENBLAS QUIET IMPORTED_TARGET openblas)
    endif()
    if(GRAPHC_OPENBLAS_FOUND)
      target_link_libraries(${target} PUBLIC PkgConfig::GRAPHC_OPENBLAS)
    else()
      find_path(GRAPHC_CBLAS_INCLUDE_DIR cblas.h PATH_SUFFIXES openblas)
      find_library(GRAPHC_OPENBLAS_LIBRARY openblas)
      if(NOT GRAPHC_CBLAS_INCLUDE_DIR OR NOT GRAPHC_OPENBLAS_LIBRARY)
        message(FATAL_ERROR "graphc_add_model(${target}): BLAS asks for OpenBLAS (cblas.h, libopenblas), which was not found")
      endif()
      target_include_directories(${target} PRIVATE "${GRAPHC_CBLAS_INCLUDE_DIR}")
      target_link_libraries(${target} PUBLIC "${GRAPHC_OPENBLAS_LIBRARY}")
    endif()
    target_compile_definitions(${target} PRIVATE GCRT_USE_BLAS)
  endif()
endfunction()
