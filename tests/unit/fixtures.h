// SPDX-License-Identifier: GPL-2.0
// Test helpers: netlink messages as bytes, the way a kernel sends them.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "nl.h"

namespace fixture {

// Netlink is host-endian; the byte arrays written out in the tests are
// little-endian, like every machine ppkit runs on.
static_assert(std::endian::native == std::endian::little,
	      "the byte fixtures are little-endian");

using Bytes = std::vector<std::uint8_t>;

// A message from literal bytes, through the same conversion as any reply.
inline ppkit::nl::MsgPtr msg(const Bytes &b)
{
	return ppkit::nl::from_bytes(b);
}

// Builds a generic netlink message by hand, attribute by attribute, without
// libnl: an independent check of what libnl builds and parses.
class Builder {
public:
	Builder(std::uint16_t type, std::uint16_t flags, std::uint8_t cmd, std::uint8_t version = 1)
	{
		put32(0);	// length, patched in bytes()
		put16(type);
		put16(flags);
		put32(1);	// seq
		put32(0);	// port
		b_.push_back(cmd);
		b_.push_back(version);
		put16(0);
	}

	Builder &flag(std::uint16_t type) { return raw(type, nullptr, 0); }
	Builder &u8(std::uint16_t type, std::uint8_t v) { return raw(type, &v, 1); }
	Builder &u16(std::uint16_t type, std::uint16_t v) { return raw(type, &v, 2); }
	Builder &u32(std::uint16_t type, std::uint32_t v) { return raw(type, &v, 4); }
	Builder &s32(std::uint16_t type, std::int32_t v) { return raw(type, &v, 4); }
	Builder &u64(std::uint16_t type, std::uint64_t v) { return raw(type, &v, 8); }
	Builder &str(std::uint16_t type, const std::string &s)
	{
		return raw(type, s.c_str(), s.size() + 1);
	}
	Builder &raw(std::uint16_t type, const void *p, std::size_t n)
	{
		put16(static_cast<std::uint16_t>(4 + n));
		put16(type);
		const auto *c = static_cast<const std::uint8_t *>(p);
		if (n)
			b_.insert(b_.end(), c, c + n);
		while (b_.size() % 4)
			b_.push_back(0);
		return *this;
	}
	// A nest: its attributes follow until end_nest().
	Builder &nest(std::uint16_t type)
	{
		nests_.push_back(b_.size());
		put16(0);
		put16(static_cast<std::uint16_t>(type | 0x8000));	// NLA_F_NESTED
		return *this;
	}
	Builder &end_nest()
	{
		std::size_t at = nests_.back();
		nests_.pop_back();
		auto len = static_cast<std::uint16_t>(b_.size() - at);
		std::memcpy(&b_[at], &len, 2);
		return *this;
	}

	Bytes bytes() const
	{
		Bytes b = b_;
		auto len = static_cast<std::uint32_t>(b.size());
		std::memcpy(b.data(), &len, 4);
		return b;
	}
	ppkit::nl::MsgPtr msg() const { return fixture::msg(bytes()); }

private:
	void put16(std::uint16_t v)
	{
		auto *p = reinterpret_cast<std::uint8_t *>(&v);
		b_.insert(b_.end(), p, p + 2);
	}
	void put32(std::uint32_t v)
	{
		auto *p = reinterpret_cast<std::uint8_t *>(&v);
		b_.insert(b_.end(), p, p + 4);
	}

	Bytes b_;
	std::vector<std::size_t> nests_;
};

}  // namespace fixture
