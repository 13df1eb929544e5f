/* fw_print.c — the firmware test's output format, the same on the board
 * and on the host (through fw_puts): a block per output,
 *
 *     output MODEL K
 *     3dc76a4a 3dada803 ...     (the float32 bit patterns in hex, 8 a line)
 *
 * then `stack N` (hex bytes of stack used) and `done`. Bits, not decimal
 * text: exact, and no printf or float formatting on the board. */
#include <string.h>

#include "fw.h"

static void put_hex(char *s, uint32_t u)
{
    static const char hex[] = "0123456789abcdef";
    for (int j = 0; j < 8; j++) s[j] = hex[(u >> (28 - 4 * j)) & 15u];
}

void fw_put_floats(const char *model, int k, const float *y, int n)
{
    char line[8 * 9 + 1];
    int len = 0;
    fw_puts("output ");
    fw_puts(model);
    put_hex(line + 1, (uint32_t)k);
    line[0] = ' ';
    line[9] = '\n';
    line[10] = 0;
    fw_puts(line);
    for (int i = 0; i < n; i++) {
        uint32_t u;
        memcpy(&u, &y[i], sizeof u);
        put_hex(line + len, u);
        len += 8;
        line[len++] = (i % 8 == 7 || i == n - 1) ? '\n' : ' ';
        if (line[len - 1] == '\n') {
            line[len] = 0;
            fw_puts(line);
            len = 0;
        }
    }
}

void fw_put_end(void)
{
    char line[] = "stack 00000000\n";
    put_hex(line + 6, fw_stack_used());
    fw_puts(line);
    fw_puts("done\n");
}
