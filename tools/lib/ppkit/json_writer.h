// SPDX-License-Identifier: GPL-2.0
// A JSON document written as it is produced, into one string: no DOM, no
// allocation per value.  ppctl's --json over a thousand pools is a megabyte;
// building it as nlohmann::json objects first cost about 100 allocations and
// a sorted map per pool.  Strings are escaped by nlohmann's serializer,
// invalid UTF-8 replaced (U+FFFD) rather than thrown on: an interface name is
// whatever bytes root gave it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ppkit {

// @s with each byte that is not part of valid UTF-8 replaced by U+FFFD, as
// JsonWriter writes it: what an nlohmann::json string must hold before
// dump() (which throws on invalid UTF-8), and a Prometheus label value.
std::string valid_utf8(std::string_view s);

// A member name that a document repeats (a pool's fields, the counters'
// names), quoted and escaped once: JsonWriter::key() then appends it as it
// is.  A thousand pools' statistics are 63,000 keys.
class JsonKey {
public:
	explicit JsonKey(std::string_view name);
	std::string_view name() const { return name_; }

private:
	friend class JsonWriter;
	std::string name_;
	std::string text_;	// ,"name":
};

class JsonWriter {
public:
	// Appends to @out, which must outlive the writer.
	explicit JsonWriter(std::string &out) : out_(out) {}

	JsonWriter &begin_object();
	JsonWriter &end_object();
	JsonWriter &begin_array();
	JsonWriter &end_array();
	// The next member's name (inside an object).
	JsonWriter &key(std::string_view k);
	JsonWriter &key(const JsonKey &k);

	JsonWriter &value(std::string_view s);
	JsonWriter &value(const char *s) { return value(std::string_view(s)); }
	JsonWriter &value(bool b);
	JsonWriter &value(std::uint64_t v);
	JsonWriter &value(std::int64_t v);
	JsonWriter &value(std::uint32_t v) { return value(std::uint64_t{v}); }
	JsonWriter &value(std::int32_t v) { return value(std::int64_t{v}); }
	// As nlohmann writes it: shortest round trip, "1.0" not "1", null if
	// not finite.
	JsonWriter &value(double v);
	JsonWriter &null();
	template <typename T>
	JsonWriter &value(const std::optional<T> &v)
	{
		return v ? value(*v) : null();
	}
	// An already serialised JSON value, written as is.
	JsonWriter &raw(std::string_view json);

	// key(k).value(v)
	template <typename T>
	JsonWriter &member(std::string_view k, const T &v)
	{
		return key(k).value(v);
	}
	template <typename T>
	JsonWriter &member(const JsonKey &k, const T &v)
	{
		return key(k).value(v);
	}
	// A string member, null when empty.
	JsonWriter &member_or_null(std::string_view k, std::string_view s)
	{
		key(k);
		return s.empty() ? null() : value(s);
	}

	// True once the top-level value is complete.
	bool done() const { return depth_.empty() && wrote_; }

private:
	// Checks that a key may come now; true when a ',' must precede it.
	bool begin_key();
	void separate();
	void open(bool object, char c);
	void close(bool object, char c);
	void string(std::string_view s);

	struct Level {
		bool object;	// else an array
		bool any;	// a member written yet
	};
	std::string &out_;
	std::vector<Level> depth_;	// the open containers
	bool after_key_ = false;
	bool wrote_ = false;
};

}  // namespace ppkit
