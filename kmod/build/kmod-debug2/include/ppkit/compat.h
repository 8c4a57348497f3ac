/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-version differences, in one place.  The runtime-tested base is
 * Debian 12's 6.1; everything else goes through the macros below.
 */
#ifndef _PPKIT_COMPAT_H
#define _PPKIT_COMPAT_H

#include <linux/version.h>
#include <linux/mmzone.h>

/* Highest valid page order: MAX_ORDER became inclusive in 6.4. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 4, 0)
#define PPB_MAX_PAGE_ORDER	MAX_ORDER
#else
#define PPB_MAX_PAGE_ORDER	(MAX_ORDER - 1)
#endif

#endif /* _PPKIT_COMPAT_H */
