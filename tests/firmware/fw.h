/* fw.h — the output of the firmware test's programs: on the board through
 * semihosting (startup.c), on the host through stdio (host_io.c), so that
 * one main prints the same text in both places (fw_print.c). */
#ifndef GRAPHC_FW_H
#define GRAPHC_FW_H

#include <stdint.h>

/* Writes a NUL-terminated string. */
void fw_puts(const char *s);
/* Ends the program with exit status 0 (success) or 1 (any other status). */
void fw_exit(int status);
/* The most stack the program has used so far, in bytes (0 on the host). */
uint32_t fw_stack_used(void);

/* Prints output k of model, n floats, as their bit patterns (fw_print.c). */
void fw_put_floats(const char *model, int k, const float *y, int n);
/* Prints the stack used and the end mark. */
void fw_put_end(void);

#endif
