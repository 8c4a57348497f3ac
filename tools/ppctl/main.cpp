// SPDX-License-Identifier: GPL-2.0
// ppctl: inspect and tune ppkit page pools.  See Documentation/ppctl.rst.
#include <iostream>

#include "cli.h"

int main(int argc, char **argv)
{
	std::ios::sync_with_stdio(false);
	return ppctl::run(argc, argv, std::cout, std::cerr);
}
