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
