// SPDX-License-Identifier: GPL-2.0
#include <catch2/catch.hpp>

#include <sstream>

#include "table.h"
#include "text.h"

using namespace ppctl;

namespace {

using text::lines;

Table sample()
{
	Table t({{"ID", true, 0}, {"NAME", false, 2}, {"VALUE", true, 1}, {"NOTE", false, 3}});
	t.add({"1", "alpha", "10", "first"});
	t.add({"200", "b", "3000", ""});
	return t;
}

}  // namespace

TEST_CASE("columns are aligned: numbers right, words left", "[table]")
{
	auto l = lines(sample().render(80));
	REQUIRE(l.size() == 3);
	CHECK(l[0] == " ID  NAME   VALUE  NOTE");
	CHECK(l[1] == "  1  alpha     10  first");
	CHECK(l[2] == "200  b       3000");	// no trailing blanks
}

TEST_CASE("a narrow terminal drops the most droppable columns first", "[table]")
{
	Table t = sample();
	CHECK(t.visible(80) == std::vector<bool>{true, true, true, true});
	// 24 columns wide in full; without NOTE 17; without NAME too, 10.
	CHECK(t.visible(24) == std::vector<bool>{true, true, true, true});
	CHECK(t.visible(23) == std::vector<bool>{true, true, true, false});
	CHECK(t.visible(17) == std::vector<bool>{true, true, true, false});
	CHECK(t.visible(16) == std::vector<bool>{true, false, true, false});
	CHECK(lines(t.render(16))[0] == " ID  VALUE");
	// Columns that may not go stay, even if the line is then too long.
	CHECK(t.visible(3) == std::vector<bool>{true, false, false, false});
	for (const auto &l : lines(t.render(40)))
		CHECK(l.size() <= 40);
}

TEST_CASE("hidden columns, minimum widths, headerless renders", "[table]")
{
	Table t({{"A", true, 0, 6}, {"B", false, 0, 0, true}, {"C", true, 0}});
	t.add({"1", "secret", "2"});
	auto l = lines(t.render(80));
	CHECK(l[0] == "     A  C");
	CHECK(l[1] == "     1  2");
	CHECK(lines(t.render(80, false)).size() == 1);
	Table short_row({{"X", true, 0}, {"Y", true, 0}});
	short_row.add({"1"});
	CHECK(short_row.rows() == 1);
	CHECK(lines(short_row.render(80))[1] == "1");
}
