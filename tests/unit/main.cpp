// SPDX-License-Identifier: GPL-2.0
// Catch2's main, alone in its file so tests rebuild fast.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
