# Read by the Makefile's llama-cpp-python build (CMAKE_PROJECT_llama.cpp_INCLUDE): runs inside
# llama.cpp's own directory, right after its project() call, before its options are declared.
#
# llama-cpp-python forces LLAMA_BUILD_COMMON on (a cache value set with FORCE, so -D cannot turn
# it off) and builds llama.cpp's "common" library: argument parsing, chat parsers, an HTTP
# client, for llama.cpp's own programs. The Python package loads libllama and libggml* only, so
# we never call it, and its C++ (with a JSON library compiled into most files) is about a third
# of the build. A plain variable here shadows the forced cache value in this directory, and
# llama.cpp's option() then keeps it (policy CMP0077). Nothing else changes: the CPU backend is
# compiled with the same flags (GGML_NATIVE as before), so the model computes the same bits.
set(LLAMA_BUILD_COMMON OFF)

# The same code with the same flags in fewer compiler runs (unity builds: CMake concatenates
# sources into one translation unit). libllama's 31 core files were each compiled alone, and each
# parsed the same headers and compiled the same standard-library templates again at -O3: in two
# units they cost about a third less CPU. Its 156 model files (a graph builder per architecture)
# are already unity-built upstream in units of 16; two units of 78 here. ggml-base's six C++
# files (the backend scheduler, GGUF reading) go in one unit. Left as they were: every file that
# computes on tensors (ggml.c, the quantization code, the whole CPU backend), so the kernels are
# compiled exactly as before; answers, logits and converted weights were checked bit-identical
# (bench/llama_bindings.py --against, bench/HISTORY.md).
#
# Pinned to llama-cpp-python 0.3.36's llama.cpp (pyproject.toml): llama-kv-cache-dsv4.cpp and
# the models deepseek4.cpp and glm5-next.cpp define helpers of the same names, so the first is
# compiled alone and the two models go in different units (alternate files, alphabetical order).
# A new pin may bring other clashes: a redefinition error in a Unity/*.cxx file says where.
set(_CORE_PER_UNIT 16)
set(_MODEL_UNITS 2)

function(_unity_units)
  set(src ${CMAKE_CURRENT_SOURCE_DIR}/src)
  get_target_property(sources llama SOURCES)
  set(core 0)
  set(model 0)
  foreach(file IN LISTS sources)
    if(NOT file MATCHES "\\.cpp$" OR file MATCHES "llama-kv-cache-dsv4\\.cpp$")
      continue()
    endif()
    cmake_path(ABSOLUTE_PATH file BASE_DIRECTORY ${src})
    if(file MATCHES "/models/")
      math(EXPR unit "${model} % ${_MODEL_UNITS}")
      set_source_files_properties(${file} DIRECTORY ${src} PROPERTIES UNITY_GROUP models${unit})
      math(EXPR model "${model} + 1")
    else()
      math(EXPR unit "${core} / ${_CORE_PER_UNIT}")
      # (llama.cpp marks its core files SKIP_UNITY_BUILD_INCLUSION: taken back here)
      set_source_files_properties(${file} DIRECTORY ${src} PROPERTIES
          SKIP_UNITY_BUILD_INCLUSION OFF UNITY_GROUP core${unit})
      math(EXPR core "${core} + 1")
    endif()
  endforeach()
  set_target_properties(llama PROPERTIES UNITY_BUILD_MODE GROUP)

  set(ggml ${CMAKE_CURRENT_SOURCE_DIR}/ggml/src)
  foreach(file ggml.cpp ggml-backend.cpp ggml-backend-meta.cpp ggml-opt.cpp ggml-threading.cpp
          gguf.cpp)
    set_source_files_properties(${ggml}/${file} DIRECTORY ${ggml} PROPERTIES UNITY_GROUP base)
  endforeach()
  set_target_properties(ggml-base PROPERTIES UNITY_BUILD ON UNITY_BUILD_MODE GROUP)

  # Hash functions for the multimodal library and llama.cpp's programs, neither built here.
  set_target_properties(vendor-hash PROPERTIES EXCLUDE_FROM_ALL ON)
endfunction()

# At the end of this directory, when llama.cpp has declared its targets.
cmake_language(DEFER CALL _unity_units)
