/* startup.c — the bare-metal runtime of the firmware test (tests/firmware/):
 * the vector table, the reset handler, ARM semihosting output and exit, and
 * the four memory functions GCC requires of any freestanding environment.
 * The images link with -nostdlib and then only libm and libgcc, so a model
 * whose code needed anything else of libc (errno, stdio, malloc) would fail
 * to link.
 *
 * Reset: enable the FPU first (CPACR: full access to coprocessors 10 and 11,
 * which also gives M-profile vector instructions their registers), then copy
 * .data from its load address in flash to RAM, zero .bss and paint the free
 * stack with a pattern (in a separate function, so that no floating-point or
 * vector instruction the compiler may choose for those loops runs before the
 * FPU is on), then main(). fw_stack_used() reads the painted stack back: the
 * bytes main has used at most so far.
 *
 * Semihosting (ARM's debug-host protocol, which qemu implements with
 * -semihosting-config enable=on): `bkpt 0xAB` with the operation in r0 and
 * its argument in r1. SYS_WRITE0 prints a NUL-terminated string on the
 * debug host's console (qemu's stderr); SYS_EXIT ends qemu, with exit status
 * 0 for the reason ADP_Stopped_ApplicationExit and 1 for any other. A fault
 * prints its name and exits with status 1.
 *
 * The memory functions are plain byte loops; this file must be compiled
 * with -fno-tree-loop-distribute-patterns, or GCC may turn the loop inside
 * memcpy into a call of memcpy. */
#include <stddef.h>
#include <stdint.h>

#include "fw.h"

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[], __stack_bottom[],
    __stack_top[];
int main(void);

#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026
#define ADP_STOPPED_RUNTIME_ERROR 0x20023

static int semihost(int op, const void *arg)
{
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void fw_puts(const char *s)
{
    semihost(SYS_WRITE0, s);
}

void fw_exit(int status)
{
    for (;;) /* SYS_EXIT does not return under qemu */
        semihost(SYS_EXIT, (const void *)(uintptr_t)(status == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                                                 : ADP_STOPPED_RUNTIME_ERROR));
}

/* The copies run through volatile pointers: GCC would otherwise turn these
 * loops into calls of memcpy and memset, which is fine, but no clearer. */
#define STACK_PAINT 0x5ca1ab1eu

__attribute__((noinline)) static void init_memory(void)
{
    volatile uint32_t *src = __data_load, *dst = __data_start;
    uint32_t *sp;
    while (dst < __data_end) *dst++ = *src++;
    for (dst = __bss_start; dst < __bss_end;) *dst++ = 0;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (dst = __stack_bottom; dst < sp - 16;) *dst++ = STACK_PAINT; /* 64 bytes below this frame */
}

uint32_t fw_stack_used(void)
{
    const volatile uint32_t *p = __stack_bottom;
    while (p < __stack_top && *p == STACK_PAINT) p++;
    return (uint32_t)((uintptr_t)__stack_top - (uintptr_t)p);
}

__attribute__((noreturn)) void Reset_Handler(void)
{
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20; /* CPACR: CP10, CP11 full access */
    __asm__ volatile("dsb\n\tisb" ::: "memory");
    init_memory();
    fw_exit(main());
    for (;;) {
    }
}

static void fault(const char *name)
{
    fw_puts("fault: ");
    fw_puts(name);
    fw_puts("\n");
    fw_exit(1);
}

static void NMI_Handler(void) { fault("NMI"); }
static void HardFault_Handler(void) { fault("HardFault"); }
static void MemManage_Handler(void) { fault("MemManage"); }
static void BusFault_Handler(void) { fault("BusFault"); }
static void UsageFault_Handler(void) { fault("UsageFault"); }
static void SecureFault_Handler(void) { fault("SecureFault"); }
static void Other_Handler(void) { fault("unexpected exception"); }

typedef void (*Vector)(void);

/* The first 16 entries of the table: the initial stack pointer, then the
 * system exceptions; no device interrupt is enabled, so none follows. */
__attribute__((section(".vectors"), used)) static const Vector vectors[16] = {
    (Vector)(uintptr_t)__stack_top, Reset_Handler, NMI_Handler, HardFault_Handler, MemManage_Handler,
    BusFault_Handler, UsageFault_Handler, SecureFault_Handler, 0, 0, 0, Other_Handler, Other_Handler, 0,
    Other_Handler, Other_Handler,
};

/* ---- what GCC may call in freestanding code ---- */

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n--) *d++ = *s++;
    return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    if (d < s)
        while (n--) *d++ = *s++;
    else
        while (n--) d[n] = s[n];
    return dst;
}

void *memset(void *dst, int c, size_t n)
{
    unsigned char *d = dst;
    while (n--) *d++ = (unsigned char)c;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *p = a, *q = b;
    for (; n; n--, p++, q++)
        if (*p != *q) return *p < *q ? -1 : 1;
    return 0;
}
