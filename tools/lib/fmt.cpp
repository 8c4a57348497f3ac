// SPDX-License-Identifier: GPL-2.0
// fmt's compiled part, once for every ppkit target.
//
// Debian ships fmt as headers and a shared library only, and ppctl is linked
// statically, so the tools used fmt header-only (FMT_HEADER_ONLY): then every
// translation unit that includes <fmt/format.h> also compiles
// <fmt/format-inl.h> (the floating-point and locale code).  That doubled the
// cost of a cold build: tools/lib/nl.cpp took 6.6 s of CPU header-only
// against 2.3 s without (g++ -O2 -g, Debian 12, fmt 9.1).  Here it is
// compiled once into libppkit; every other file sees fmt's declarations, and
// the templates <fmt/format.h> declares extern are instantiated below.
#include <fmt/format.h>
#include <fmt/format-inl.h>

FMT_BEGIN_NAMESPACE
namespace detail {

template FMT_API auto dragonbox::to_decimal(float x) noexcept -> dragonbox::decimal_fp<float>;
template FMT_API auto dragonbox::to_decimal(double x) noexcept -> dragonbox::decimal_fp<double>;
template FMT_API locale_ref::locale_ref(const std::locale &loc);
template FMT_API auto locale_ref::get<std::locale>() const -> std::locale;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template FMT_API auto decimal_point_impl(locale_ref) -> char;
template FMT_API auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template FMT_API auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
FMT_END_NAMESPACE
