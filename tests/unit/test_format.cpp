// SPDX-License-Identifier: GPL-2.0
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>

#include <fcntl.h>
#include <unistd.h>

#include "format.h"

using namespace ppctl;

TEST_CASE("counts are humanised in at most four characters", "[format]")
{
	CHECK(human_count(0) == "0");
	CHECK(human_count(999) == "999");
	CHECK(human_count(1000) == "1.0K");
	CHECK(human_count(1234) == "1.2K");
	CHECK(human_count(9949) == "9.9K");
	CHECK(human_count(9960) == "10K");
	CHECK(human_count(123456) == "123K");
	CHECK(human_count(999499) == "999K");
	CHECK(human_count(999999) == "1.0M");
	CHECK(human_count(1234567) == "1.2M");
	CHECK(human_count(5'000'000'000ull) == "5.0G");
	CHECK(human_count(UINT64_MAX) == "18E");
	for (std::uint64_t v = 1; v < UINT64_MAX / 7; v = v * 7 + 3)
		CHECK(human_count(v).size() <= 4);
}

TEST_CASE("bytes are humanised in powers of 1024", "[format]")
{
	CHECK(human_bytes(0) == "0B");
	CHECK(human_bytes(512) == "512B");
	CHECK(human_bytes(4096) == "4.0K");
	CHECK(human_bytes(65536) == "64K");
	CHECK(human_bytes(1536 * 1024) == "1.5M");
}

TEST_CASE("raw numbers, rates and durations", "[format]")
{
	CHECK(count(1234567, true) == "1234567");
	CHECK(count(1234567, false) == "1.2M");
	CHECK(count(std::optional<std::uint64_t>(), false) == "-");
	CHECK(percent(0.9734) == "97.3%");
	CHECK(percent(1.0) == "100.0%");
	CHECK(percent(0.0) == "0.0%");
	CHECK(percent(std::nullopt) == "-");
	CHECK(per_second(1500.4, false) == "1.5K");
	CHECK(per_second(12.25, true) == "12.2");
	CHECK(per_second(std::nullopt, false) == "-");
	CHECK(duration(12.34) == "12.3s");
	CHECK(duration(312) == "5m12s");
	CHECK(duration(3 * 3600 + 5 * 60) == "3h05m");
	CHECK(duration(2 * 86400 + 4 * 3600) == "2d04h");
}

TEST_CASE("terminal width: the tty, else COLUMNS, else 80", "[format]")
{
	const char *old = std::getenv("COLUMNS");
	std::string saved = old ? old : "";
	// fd -1 is no terminal: the environment decides.
	setenv("COLUMNS", "132", 1);
	CHECK(terminal_width(-1) == 132);
	setenv("COLUMNS", "wide", 1);
	CHECK(terminal_width(-1) == 80);
	unsetenv("COLUMNS");
	CHECK(terminal_width(-1) == 80);
	if (old)
		setenv("COLUMNS", saved.c_str(), 1);
}

TEST_CASE("layout: a terminal as asked, a pipe whole and exact", "[format]")
{
	// A terminal: its width; humanised unless --raw.
	CHECK(layout_for(true, 100, false, false).width == 100);
	CHECK_FALSE(layout_for(true, 100, false, false).raw);
	CHECK(layout_for(true, 100, true, false).raw);
	CHECK_FALSE(layout_for(true, 100, false, true).raw);
	// Not a terminal: no width limit, whatever $COLUMNS says; exact
	// numbers unless --human.
	CHECK(layout_for(false, 0, false, false).width == kNoWidthLimit);
	CHECK(layout_for(false, 0, false, false).raw);
	CHECK(layout_for(false, 0, true, false).raw);
	CHECK_FALSE(layout_for(false, 0, false, true).raw);

	// A real descriptor that is no terminal: /dev/null.
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	REQUIRE(fd >= 0);
	setenv("COLUMNS", "40", 1);
	Layout l = layout_of(fd, false, false);
	unsetenv("COLUMNS");
	close(fd);
	CHECK(l.width == kNoWidthLimit);
	CHECK(l.raw);
}
