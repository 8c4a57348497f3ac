// SPDX-License-Identifier: GPL-2.0
#include "ppkit/json_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstring>
#include <cmath>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace ppkit {

namespace {

// The bytes a JSON string cannot hold as they are (controls, '"', '\\'),
// and those that need a UTF-8 check (>= 0x80): nlohmann's serializer writes
// strings with any of them.
constexpr std::array<bool, 256> kSpecial = [] {
	std::array<bool, 256> t{};
	for (unsigned c = 0; c < 256; c++)
		t[c] = c < 0x20 || c == '"' || c == '\\' || c >= 0x80;
	return t;
}();

bool plain(std::string_view s)
{
	for (unsigned char c : s)
		if (kSpecial[c])
			return false;
	return true;
}

// Keys and short strings are put together here and appended at once: one
// std::string append rather than one per piece (a thousand pools'
// statistics are tens of thousands of keys).
constexpr std::size_t kShort = 64;

}  // namespace

std::string valid_utf8(std::string_view s)
{
	if (std::all_of(s.begin(), s.end(), [](unsigned char c) { return c < 0x80; }))
		return std::string(s);
	// nlohmann's own replacement, so that both agree on what a bad byte is.
	return nlohmann::json::parse(nlohmann::json(std::string(s))
					     .dump(-1, ' ', false,
						   nlohmann::json::error_handler_t::replace))
		.get<std::string>();
}

void JsonWriter::separate()
{
	if (after_key_) {
		after_key_ = false;
		return;
	}
	if (depth_.empty()) {
		if (wrote_)
			throw std::logic_error("JsonWriter: a second top-level value");
		return;
	}
	if (depth_.back().object)
		throw std::logic_error("JsonWriter: a value in an object without its key()");
	if (depth_.back().any)
		out_ += ',';
	depth_.back().any = true;
}

void JsonWriter::open(bool object, char c)
{
	separate();
	out_ += c;
	depth_.push_back({object, false});
}

void JsonWriter::close(bool object, char c)
{
	if (depth_.empty() || depth_.back().object != object || after_key_)
		throw std::logic_error(object ? "JsonWriter: end_object() without an open object"
					      : "JsonWriter: end_array() without an open array");
	depth_.pop_back();
	out_ += c;
	wrote_ = true;
}

JsonWriter &JsonWriter::begin_object()
{
	open(true, '{');
	return *this;
}

JsonWriter &JsonWriter::end_object()
{
	close(true, '}');
	return *this;
}

JsonWriter &JsonWriter::begin_array()
{
	open(false, '[');
	return *this;
}

JsonWriter &JsonWriter::end_array()
{
	close(false, ']');
	return *this;
}

JsonKey::JsonKey(std::string_view name) : name_(name), text_(",")
{
	JsonWriter(text_).value(name);
	text_ += ':';
}

bool JsonWriter::begin_key()
{
	if (depth_.empty() || !depth_.back().object || after_key_)
		throw std::logic_error("JsonWriter: key() outside an object");
	const bool comma = depth_.back().any;
	depth_.back().any = true;
	after_key_ = true;
	return comma;
}

JsonWriter &JsonWriter::key(std::string_view k)
{
	const bool comma = begin_key();
	if (k.size() <= kShort && plain(k)) {
		char buf[kShort + 4];
		std::size_t n = 0;
		if (comma)
			buf[n++] = ',';
		buf[n++] = '"';
		std::memcpy(buf + n, k.data(), k.size());
		n += k.size();
		buf[n++] = '"';
		buf[n++] = ':';
		out_.append(buf, n);
		return *this;
	}
	if (comma)
		out_ += ',';
	string(k);
	out_ += ':';
	return *this;
}

JsonWriter &JsonWriter::key(const JsonKey &k)
{
	std::string_view t = k.text_;
	if (!begin_key())
		t.remove_prefix(1);
	out_ += t;
	return *this;
}

void JsonWriter::string(std::string_view s)
{
	if (plain(s)) {
		if (s.size() <= kShort) {
			char buf[kShort + 2];
			buf[0] = '"';
			std::memcpy(buf + 1, s.data(), s.size());
			buf[s.size() + 1] = '"';
			out_.append(buf, s.size() + 2);
		} else {
			out_ += '"';
			out_ += s;
			out_ += '"';
		}
	} else {
		out_ += nlohmann::json(std::string(s))
				.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
	}
}

JsonWriter &JsonWriter::value(std::string_view s)
{
	separate();
	string(s);
	wrote_ = true;
	return *this;
}

namespace {

// @v in decimal, into @buf.
template <typename T>
std::string_view decimal(char (&buf)[24], T v)
{
	auto r = std::to_chars(buf, buf + sizeof(buf), v);
	return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

}  // namespace

JsonWriter &JsonWriter::value(bool b)
{
	return raw(b ? "true" : "false");
}

JsonWriter &JsonWriter::value(std::uint64_t v)
{
	char buf[24];
	return raw(decimal(buf, v));
}

JsonWriter &JsonWriter::value(std::int64_t v)
{
	char buf[24];
	return raw(decimal(buf, v));
}

JsonWriter &JsonWriter::value(double v)
{
	if (!std::isfinite(v))
		return null();
	separate();
	char buf[32];
	auto r = std::to_chars(buf, buf + sizeof(buf), v);
	std::string_view s(buf, static_cast<std::size_t>(r.ptr - buf));
	out_ += s;
	if (s.find_first_of(".e") == std::string_view::npos)
		out_ += ".0";
	wrote_ = true;
	return *this;
}

JsonWriter &JsonWriter::null()
{
	return raw("null");
}

JsonWriter &JsonWriter::raw(std::string_view json)
{
	separate();
	out_ += json;
	wrote_ = true;
	return *this;
}

}  // namespace ppkit
