// SPDX-License-Identifier: GPL-2.0
// Catch2's main, alone in its file so tests rebuild fast; it registers the
// [host] cases that need the netdev family first (host.h).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <iostream>

#include "host.h"

int main(int argc, char *argv[])
{
	Catch::Session session;
	if (int rc = session.applyCommandLine(argc, argv))
		return rc;
	auto skipped = host::register_netdev_cases(session.config());
	int rc = session.run();
	// stderr: stdout may be a reporter's XML or ctest's list of names.
	for (const std::string &s : skipped)
		std::cerr << s << "\n";
	return rc;
}
