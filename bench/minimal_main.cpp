// SPDX-License-Identifier: MIT
/// @file bench/minimal_main.cpp The floor for start-up: a C++ program that prints one line through
/// <iostream>, built with the CLI's compiler and flags and linked like it (libstdc++ shared), so that
/// bench/startup_ratio.py can divide `spotdnn predict`'s process CPU time by this program's.
#include <iostream>

int main() {
  std::cout << "spotdnn start-up floor\n";
  return 0;
}
