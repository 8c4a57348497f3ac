// SPDX-License-Identifier: GPL-2.0
// ppkit::JsonWriter: what it writes parses, and reads as nlohmann writes it.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include <nlohmann/json.hpp>

#include "ppkit/json_writer.h"

using ppkit::JsonWriter;
using nlohmann::json;

TEST_CASE("JsonWriter: nesting and separators", "[json_writer]")
{
	std::string s;
	JsonWriter w(s);
	w.begin_object()
		.member("a", std::uint64_t{1})
		.key("b")
		.begin_array()
		.value(std::int64_t{-2})
		.value(true)
		.null()
		.begin_object()
		.end_object()
		.begin_array()
		.end_array()
		.end_array()
		.member_or_null("c", "")
		.member_or_null("d", "x")
		.member("e", std::optional<std::uint32_t>{})
		.member("f", std::optional<std::uint32_t>{7})
		.end_object();
	CHECK(w.done());
	CHECK(s == R"({"a":1,"b":[-2,true,null,{},[]],"c":null,"d":"x","e":null,"f":7})");
}

TEST_CASE("JsonWriter: strings are escaped, bad UTF-8 replaced", "[json_writer]")
{
	for (std::string in : {"plain", "q\"uote", "back\\slash", "tab\tnl\n", "\x01", "caf\xc3\xa9"}) {
		std::string s;
		JsonWriter(s).value(in);
		CHECK(json::parse(s) == in);
		CHECK(s == json(in).dump());
	}
	std::string s;
	JsonWriter(s).value(std::string_view("a\xff" "b", 3));
	CHECK(json::parse(s) == "a\xef\xbf\xbd" "b");
}

TEST_CASE("valid_utf8: bad bytes become U+FFFD, good text stays", "[json_writer]")
{
	CHECK(ppkit::valid_utf8("eth0") == "eth0");
	CHECK(ppkit::valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
	CHECK(ppkit::valid_utf8("") == "");
	CHECK(ppkit::valid_utf8("\xff\xfe") == "\xef\xbf\xbd\xef\xbf\xbd");
	CHECK(ppkit::valid_utf8("a\xc3") == "a\xef\xbf\xbd");
	CHECK_NOTHROW(json(ppkit::valid_utf8("x\xff\x80y")).dump());
}

TEST_CASE("JsonWriter: numbers as nlohmann writes them", "[json_writer]")
{
	for (double d : {0.0, 1.0, 0.5, 0.9, 10.0, 1.0 / 3.0, 9500.0 / 9992.0, 123456789.0, 1e21,
			 1e-7, -2.5}) {
		std::string s;
		JsonWriter(s).value(d);
		CHECK(s == json(d).dump());
	}
	for (double d : {std::numeric_limits<double>::infinity(), std::nan("")}) {
		std::string s;
		JsonWriter(s).value(d);
		CHECK(s == "null");
	}
	for (std::uint64_t v : {std::uint64_t{0}, std::numeric_limits<std::uint64_t>::max()}) {
		std::string s;
		JsonWriter(s).value(v);
		CHECK(s == json(v).dump());
	}
	std::string s;
	JsonWriter(s).value(std::numeric_limits<std::int64_t>::min());
	CHECK(s == json(std::numeric_limits<std::int64_t>::min()).dump());
}

TEST_CASE("JsonWriter: misuse is a logic error, not a broken document", "[json_writer]")
{
	std::string s;
	JsonWriter w(s);
	CHECK_THROWS_AS(w.key("x"), std::logic_error);
	CHECK_THROWS_AS(w.end_object(), std::logic_error);
	w.begin_array();
	CHECK_THROWS_AS(w.key("x"), std::logic_error);
	CHECK_FALSE(w.done());
	w.end_array();
	CHECK(w.done());
	CHECK_THROWS_AS(w.value(true), std::logic_error);
}

TEST_CASE("JsonWriter: keys, short and long, plain and escaped", "[json_writer]")
{
	// Short plain keys and strings take the one-append path; long or
	// escaped ones the general path: both must read back the same.
	const std::string longer(100, 'k');
	for (std::string k : {std::string("a"), std::string(64, 'x'), std::string(65, 'y'), longer,
			      std::string("q\"uote"), std::string("caf\xc3\xa9")}) {
		std::string s;
		JsonWriter w(s);
		w.begin_object().member("first", k).member(k, k).member("last", true).end_object();
		json j = json::parse(s);
		CHECK(j.at(k) == k);
		CHECK(j.at("first") == k);
		CHECK(j.at("last") == true);
		const std::string q = json(k).dump();
		CHECK(s == R"({"first":)" + q + "," + q + ":" + q + R"(,"last":true})");
	}
}

TEST_CASE("JsonWriter: a JsonKey writes what key() does", "[json_writer]")
{
	for (std::string k : {std::string("alloc_fast"), std::string("q\"uote"), std::string(80, 'z')}) {
		const ppkit::JsonKey jk(k);
		CHECK(jk.name() == k);
		std::string a, b;
		JsonWriter(a).begin_object().member(k, 1u).member(k, 2u).end_object();
		JsonWriter(b).begin_object().member(jk, 1u).key(jk).value(2u).end_object();
		CHECK(a == b);
	}
	std::string s;
	JsonWriter w(s);
	const ppkit::JsonKey jk("x");
	CHECK_THROWS_AS(w.key(jk), std::logic_error);
	w.begin_array();
	CHECK_THROWS_AS(w.key(jk), std::logic_error);
}
