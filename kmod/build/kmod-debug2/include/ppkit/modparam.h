/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Range-checked unsigned module parameters for the ppkit modules: a value
 * out of range is refused with -ERANGE and a logged reason, never clamped.
 * Each module keeps its own copy (static inline): nothing is exported.
 */
#ifndef _PPKIT_MODPARAM_H
#define _PPKIT_MODPARAM_H

#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/printk.h>

static inline int ppkit_param_set_range(const char *val, const struct kernel_param *kp,
					unsigned int min, unsigned int max)
{
	unsigned int v;
	int err = kstrtouint(val, 0, &v);

	if (err)
		return err;
	if (v < min || v > max) {
		pr_err("%s: %s=%u out of range %u..%u\n", KBUILD_MODNAME, kp->name, v, min, max);
		return -ERANGE;
	}
	*(unsigned int *)kp->arg = v;
	return 0;
}

#endif /* _PPKIT_MODPARAM_H */
