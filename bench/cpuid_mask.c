/* Preloaded by bench/avx2_only.sh: makes this process (and every thread and child it starts)
 * see a CPU without AVX-512, AVX-VNNI, AVX-NE-CONVERT, AVX10 or AMX.
 *
 * Linux's CPUID faulting (arch_prctl ARCH_SET_CPUID 0) turns each CPUID instruction into a
 * SIGSEGV; the handler runs the real CPUID with faulting briefly off, clears the feature bits
 * (leaf 7 subleaves 0 and 1, the XSAVE state of leaf 0xD, the AMX and AVX10 leaves), writes
 * the answer into the interrupted registers and steps over the two-byte instruction. Any
 * other SIGSEGV is a real fault: the default action is put back and the instruction re-run.
 * The setting is per thread, inherited by new threads and by fork; exec clears it, and the
 * preload sets it again in the new program. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>
#define ARCH_SET_CPUID 0x1012
static void real_cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  __asm__ volatile("cpuid" : "=a"(r[0]), "=b"(r[1]), "=c"(r[2]), "=d"(r[3]) : "a"(leaf), "c"(sub));
}
/* Leaf 7.0: EBX AVX512F/DQ/IFMA/PF/ER/CD/BW/VL, ECX AVX512_VBMI/VBMI2/VNNI/BITALG/VPOPCNTDQ,
 * EDX AVX512_4VNNIW/4FMAPS/VP2INTERSECT, AMX_BF16, AVX512_FP16, AMX_TILE, AMX_INT8. Leaf 7.1: EAX
 * AVX_VNNI, AVX512_BF16, AMX_FP16, AVX_IFMA; EDX AVX_VNNI_INT8, AVX_NE_CONVERT, AVX_VNNI_INT16, AVX10. */
static void mask(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
  if (leaf == 7 && sub == 0) {
    r[1] &= ~((1u<<16)|(1u<<17)|(1u<<21)|(1u<<26)|(1u<<27)|(1u<<28)|(1u<<30)|(1u<<31));
    r[2] &= ~((1u<<1)|(1u<<6)|(1u<<11)|(1u<<12)|(1u<<14));
    r[3] &= ~((1u<<2)|(1u<<3)|(1u<<8)|(1u<<22)|(1u<<23)|(1u<<24)|(1u<<25));
  } else if (leaf == 7 && sub == 1) {
    r[0] &= ~((1u<<4)|(1u<<5)|(1u<<21)|(1u<<23));
    r[3] &= ~((1u<<4)|(1u<<5)|(1u<<10)|(1u<<19));
  } else if (leaf == 0xd && sub == 0) {
    r[0] &= ~((1u<<5)|(1u<<6)|(1u<<7)|(1u<<17)|(1u<<18));
  } else if (leaf == 0x1d || leaf == 0x1e || leaf == 0x24) {
    r[0] = r[1] = r[2] = r[3] = 0;
  }
}
static void on_segv(int sig, siginfo_t *si, void *ctx) {
  (void)si;
  greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
  unsigned char *ip = (unsigned char *)g[REG_RIP];
  if (ip[0] == 0x0f && ip[1] == 0xa2) {
    uint32_t r[4], leaf = (uint32_t)g[REG_RAX], sub = (uint32_t)g[REG_RCX];
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 1);
    real_cpuid(leaf, sub, r);
    syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
    mask(leaf, sub, r);
    g[REG_RAX] = r[0]; g[REG_RBX] = r[1]; g[REG_RCX] = r[2]; g[REG_RDX] = r[3];
    g[REG_RIP] += 2;
    return;
  }
  signal(sig, SIG_DFL);  /* a real fault: returning re-runs it under the default action */
}
__attribute__((constructor)) static void start(void) {
  struct sigaction sa = {0};
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, 0);
  syscall(SYS_arch_prctl, ARCH_SET_CPUID, 0);
}
