// Darwin stub for the Apple type-check (scripts/typecheck-apple.sh): the C declarations the
// package uses, written as Apple's SDK headers declare them, so that Swift imports them exactly
// as on an Apple platform — a C module, not a Swift one: results are discardable, macros become
// constants, globals such as `stdout` and `mach_task_self_` are shared mutable state (an error
// to read in the Swift 6 language mode), nullability and async-unavailability come from the
// same attributes as in the SDK. Availability is the headers' (`__API_AVAILABLE`); declarations
// without it are available on every Apple platform.
//
// Source for every declaration: the iOS 17.4 SDK's headers (usr/include: stdio.h, stdlib.h,
// unistd.h, dlfcn.h, math.h, sched.h, pthread/pthread.h, malloc/malloc.h, mach/*.h); the
// pthread async-unavailability is also in later SDKs. Add a declaration here only with the
// SDK's own spelling of it; a stub more permissive than the SDK hides errors.
#ifndef OPERATIONBRIDGE_DARWIN_STUB_H
#define OPERATIONBRIDGE_DARWIN_STUB_H

#include <stddef.h>
#include <stdint.h>

#define __STUB_AVAILABLE(macos_v, ios_v) \
    __attribute__((availability(macos, introduced = macos_v))) \
    __attribute__((availability(ios, introduced = ios_v)))
#define __STUB_UNAVAILABLE_FROM_ASYNC(msg) \
    __attribute__((__swift_attr__("@_unavailableFromAsync(message: \"" msg "\")")))

#pragma clang assume_nonnull begin

// sys/_types.h, sys/types.h
typedef int32_t pid_t;
typedef uint32_t useconds_t;
typedef unsigned long pthread_key_t;

// stdio.h: no nullability annotations in the SDK's stdio.h (parameters import as `!`).
#pragma clang assume_nonnull end
typedef struct __sFILE FILE;
extern FILE *__stdoutp;
extern FILE *__stderrp;
#define stdout __stdoutp
#define stderr __stderrp
int fflush(FILE *);
int fputs(const char *__restrict, FILE *__restrict);

// stdlib.h
void exit(int) __attribute__((__noreturn__));
char *getenv(const char *);
int setenv(const char *__name, const char *__value, int __overwrite);
int unsetenv(const char *);
void *malloc(size_t __size);
void free(void *);

// unistd.h
#define STDIN_FILENO 0
#define STDOUT_FILENO 1
#define STDERR_FILENO 2
int dup(int);
int dup2(int, int);
int close(int);
pid_t getpid(void);
int isatty(int);
long sysconf(int);
#define _SC_PAGESIZE 29
int usleep(useconds_t);

// dlfcn.h
#define RTLD_DEFAULT ((void *)-2)
extern void *dlsym(void *__handle, const char *__symbol);

// math.h
extern double pow(double, double);
extern double sqrt(double);
extern double floor(double);
extern double ceil(double);
extern double log(double);

// malloc/malloc.h
extern size_t malloc_size(const void *ptr);

// mach: the task's port and its basic information (mach/mach_init.h, mach_traps.h, task.h,
// task_info.h, kern_return.h). `mach_task_self_` is a global variable, as in the SDK.
typedef unsigned int natural_t;
typedef int integer_t;
typedef natural_t mach_port_name_t;
typedef natural_t mach_port_t;
typedef mach_port_t task_t;
typedef mach_port_t task_name_t;
typedef natural_t mach_msg_type_number_t;
typedef int kern_return_t;
typedef natural_t task_flavor_t;
typedef integer_t *task_info_t;
typedef uint64_t mach_vm_size_t;
typedef int policy_t;
typedef struct time_value { integer_t seconds; integer_t microseconds; } time_value_t;
#define KERN_SUCCESS 0
#define MACH_TASK_BASIC_INFO 20
#pragma pack(push, 4)
struct mach_task_basic_info {
    mach_vm_size_t virtual_size;
    mach_vm_size_t resident_size;
    mach_vm_size_t resident_size_max;
    time_value_t user_time;
    time_value_t system_time;
    policy_t policy;
    integer_t suspend_count;
};
#pragma pack(pop)
extern mach_port_t mach_task_self_;
extern mach_port_name_t task_self_trap(void);
extern kern_return_t task_info(task_name_t target_task, task_flavor_t flavor, task_info_t task_info_out,
                               mach_msg_type_number_t *task_info_outCnt);

#pragma clang assume_nonnull begin

// pthread/pthread.h (inside the SDK header's assume_nonnull region)
__STUB_AVAILABLE(10.4, 2.0)
int pthread_key_create(pthread_key_t *, void (*_Nullable)(void *));
__STUB_AVAILABLE(10.4, 2.0)
int pthread_key_delete(pthread_key_t);
__STUB_UNAVAILABLE_FROM_ASYNC("Use Task Local Values instead")
__STUB_AVAILABLE(10.4, 2.0)
void *_Nullable pthread_getspecific(pthread_key_t);
__STUB_AVAILABLE(10.4, 2.0)
int pthread_setspecific(pthread_key_t, const void *_Nullable);

// sched.h
int sched_yield(void);

#pragma clang assume_nonnull end

#endif
