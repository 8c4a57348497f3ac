/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Race windows of the pool's lock-free readers.  Built only with
 * CONFIG_PPKIT_RACE_WINDOWS=y (make modules-debug, for the debug kernel),
 * where pp_race widens a window so that what it lets through is hit in
 * every run rather than once in millions of reads; elsewhere they compile
 * to nothing.
 */
#ifndef _PPKIT_RACE_H
#define _PPKIT_RACE_H

#include <linux/compiler.h>
#include <linux/delay.h>

#ifdef CONFIG_PPKIT_RACE_WINDOWS
/* Microseconds between a statistics reader's lookup and its read. */
extern unsigned int ppb_race_window_us;

static inline void ppb_race_window(void)
{
	unsigned int us = READ_ONCE(ppb_race_window_us);

	if (us)
		udelay(us);
}
#else
static inline void ppb_race_window(void)
{
}
#endif

#endif /* _PPKIT_RACE_H */
