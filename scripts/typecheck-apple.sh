#!/usr/bin/env bash
# Type-checks every target of the package for every Apple platform Package.swift declares, at
# its minimum version, on Linux. CI runs it (.ci/run); run it after changing code that the Apple
# platforms compile differently (`#if canImport(Darwin)`, availability, Foundation/Dispatch).
#
#   scripts/typecheck-apple.sh [--platform macos|ios|tvos|watchos|visionos]... [-j N] [--rebuild]
#
# Exit status: 0 clean; 1 a target has an error, or a warning in the main package; 2 the check
# could not run (a toolchain interface or a stub does not compile, a setting it does not know).
#
# What it checks. Every target of Package.swift (the library, OperationBridgeTests, every
# example, the benchmark) and of Tests/Clients, with the flags SwiftPM gives it in a debug build
# (its language mode, upcoming features, `-D` defines for that platform — EXIT_TESTS on macOS
# only —, SWIFT_PACKAGE, DEBUG), for x86_64-apple-macosx13.0, x86_64-apple-ios16.0-simulator,
# x86_64-apple-tvos16.0-simulator, x86_64-apple-watchos9.0-simulator and
# x86_64-apple-xros1.0-simulator (read from Package.swift; x86_64 because the interfaces'
# Float80 declarations need it). Each target is compiled with `-emit-module` against only its
# own dependencies' modules, so the SIL diagnostics run too (definite initialization,
# region-based isolation, which `-typecheck` alone skips), and `#if canImport(Darwin)` /
# `#if os(...)` branches are the Apple ones.
#
# Against what. Swift, _Concurrency, _StringProcessing, Synchronization, SwiftOnoneSupport and
# Testing are the toolchain's own, rebuilt for each target from its .swiftinterface files: their
# availability is the real one (`Mutex` is macOS 15, a bare `Failure` in an iterator is the
# conformance's macOS 15 type witness). Darwin, Dispatch, os and Foundation are stubs in
# scripts/apple-typecheck/stubs, written from Apple's SDK headers, Swift interfaces and
# documentation: only what the package uses, with Apple's availability, `Sendable`,
# async-unavailability and platform unavailability (`Process` is macOS only). Their verdicts are
# only as good as those declarations; "unsure:" comments in them say where they could not be
# checked against an SDK. The macOS workflow (.github/workflows/ci.yml) remains the only proof
# against the real SDK: Objective-C interop (the check runs without it), linking, running.
#
# Warnings. The main package's warnings fail the check, as they fail the Linux build
# (`-warnings-as-errors`) and the macOS and simulator jobs (-warnings-as-errors,
# SWIFT_TREAT_WARNINGS_AS_ERRORS). Apple-only warnings are exactly what this check is for: a
# deprecation, an availability warning (a conformance newer than the target), a Sendable or
# async-unavailability warning from an SDK annotation, a switch over a non-frozen SDK enum without
# `@unknown default` — each fails the Apple builds as an error. Tests/Clients's warnings are
# reported, not failed: CI builds that package without -warnings-as-errors, and its legacy Swift 5
# target warns by design (Foundation's blocking waits called from async code).
#
# Cost. The rebuilt toolchain and stub modules are cached in .build/apple-typecheck/<triple>
# (or $APPLE_TYPECHECK_DIR), keyed by a hash of the compiler, the patched interfaces, the stubs
# and the flags: a new toolchain or a changed stub rebuilds them. A clean run compiles the
# interfaces once per platform (about a CPU minute each); platforms run in parallel (`-j`,
# default: the number of CPUs). The mechanics are in scripts/apple-typecheck/typecheck.py.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/apple-typecheck/typecheck.py "$@"
