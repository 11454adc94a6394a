#!/usr/bin/env python3
"""Type-checks every target of the package for every Apple platform it declares, on Linux.

Run it through scripts/typecheck-apple.sh, whose header says what the check proves, what it
cannot, and why warnings fail. This file is the mechanics:

1. The plan comes from the manifests (`swift package dump-package` and `describe`): every
   target, its sources, dependencies and Swift settings, and the platforms with their minimum
   versions. Nothing is listed here by hand; a setting this script does not know fails the run.
2. Per platform, the toolchain's Linux `.swiftinterface` files of Swift, _Concurrency,
   _StringProcessing, Synchronization, SwiftOnoneSupport and Testing are compiled for the
   platform's x86_64 target (the interfaces carry Apple availability; x86_64 keeps their Float80
   declarations valid). A few Linux-only details are patched first (`patch_interface`).
3. The stubs in stubs/ (Darwin, Dispatch, os, Foundation: what the package uses, with the
   availability and concurrency annotations of Apple's SDK) are compiled against them, with
   library evolution like the SDK's modules (non-frozen enums need `@unknown default`).
4. Every target is compiled with `-emit-module` in dependency order, with the flags SwiftPM
   gives it in a debug build: `-emit-module` runs the SIL diagnostic passes too (definite
   initialization, region-based isolation), which `-typecheck` alone skips. A target sees only
   its own dependencies' modules.

Steps 2 and 3 are cached under the cache directory, one folder per target triple, keyed by a
hash of the compiler, the (patched) interfaces, the stubs and the flags: a changed stub or
toolchain rebuilds, and an interrupted build leaves nothing half-written behind.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
STUB_DIR = os.path.join(HERE, "stubs")

# SwiftPM platform name -> (name shown, target triple for the minimum version). Simulator
# triples for the devices: the x86_64 slices compile the interfaces as they are.
PLATFORMS = {
    "macos": ("macOS", "x86_64-apple-macosx{}"),
    "ios": ("iOS", "x86_64-apple-ios{}-simulator"),
    "tvos": ("tvOS", "x86_64-apple-tvos{}-simulator"),
    "watchos": ("watchOS", "x86_64-apple-watchos{}-simulator"),
    "visionos": ("visionOS", "x86_64-apple-xros{}-simulator"),
}

# The SDK folder is empty but for visionOS's SDKSettings.json: the compiler infers visionOS
# availability from iOS availability (`@available(iOS 16, *)` on a declaration with no visionOS
# version) through the SDK's version map, iOS 17.1 being visionOS 1.0; without the map it
# compares the iOS version with the visionOS one, and everything from iOS 2 on looks newer than
# visionOS 1. The map below is the one visionOS SDKs ship (their iOS_visionOS/visionOS_iOS pairs).
VISIONOS_VERSIONS = [("1.0", "17.1"), ("1.1", "17.4"), ("1.2", "17.5"), ("2.0", "18.0"), ("2.1", "18.1"),
                     ("2.2", "18.2"), ("2.3", "18.3"), ("2.4", "18.4"), ("2.5", "18.5"), ("2.6", "18.6"),
                     ("26.0", "26.0")]
SDK_SETTINGS = {
    "visionos": {
        "DisplayName": "visionOS 26.0", "Version": "26.0", "CanonicalName": "xrsimulator26.0",
        "DefaultDeploymentTarget": "26.0", "MaximumDeploymentTarget": "26.0.99",
        "VersionMap": {
            "visionOS_iOS": dict(VISIONOS_VERSIONS), "xrOS_iOS": dict(VISIONOS_VERSIONS),
            "iOS_visionOS": {ios: xr for xr, ios in VISIONOS_VERSIONS},
            "iOS_xrOS": {ios: xr for xr, ios in VISIONOS_VERSIONS},
        },
    },
}

# Toolchain modules rebuilt from their interfaces, in dependency order.
TOOLCHAIN_MODULES = ["Swift", "SwiftOnoneSupport", "_Concurrency", "_StringProcessing", "Synchronization", "Testing"]
# Stub modules: Darwin is a C module (stubs/Darwin: a header and its module map, imported by
# Clang as Apple's is); the others are Swift, in dependency order (Foundation re-exports Darwin
# and Dispatch, as on Apple platforms).
C_STUB_DIR = os.path.join(STUB_DIR, "Darwin")
STUB_MODULES = ["Dispatch", "os", "Foundation"]

# Packages checked: the main package (warnings fail, as in the Linux build's -warnings-as-errors)
# and the client packages that depend on it by path (warnings reported only: CI builds them
# without -warnings-as-errors, and their legacy Swift 5 code warns by design).
CLIENT_PACKAGES = ["Tests/Clients"]

DIAGNOSTIC = re.compile(r"^(?P<loc>[^\s:][^:]*:\d+:\d+): (?P<kind>error|warning|note|remark): (?P<msg>.*)$")
EXIT_TESTS_UNAVAILABLE = '@available(*, unavailable, message: "Exit tests are not available on this platform.")'


class Failure(Exception):
    """The check could not run (as opposed to: it ran and found errors)."""


def run(cmd, cwd=None):
    """Runs a command; returns (exit status, combined output)."""
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def sha(*parts):
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else str(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()[:16]


# ---------------------------------------------------------------------------------------------
# Toolchain


class Toolchain:
    def __init__(self):
        swift = shutil.which("swift")
        if not swift:
            raise Failure("no `swift` on PATH")
        self.bin = os.path.dirname(os.path.realpath(swift))
        self.frontend = os.path.join(self.bin, "swift-frontend")
        self.resources = os.path.join(os.path.dirname(self.bin), "lib", "swift")
        self.plugins = os.path.join(self.resources, "host", "plugins")
        status, version = run([self.frontend, "-version"])
        if status != 0:
            raise Failure("swift-frontend -version failed:\n" + version)
        info = os.stat(self.frontend)
        # The version line names the release; size and time tell two builds of it apart.
        self.identity = sha(version, info.st_size, int(info.st_mtime))
        self.version = version.strip().splitlines()[0]

    def interface(self, module):
        path = os.path.join(self.resources, "linux", module + ".swiftmodule", "x86_64-unknown-linux-gnu.swiftinterface")
        if not os.path.exists(path):
            raise Failure("the toolchain has no interface for %s (%s)" % (module, path))
        return path


def patch_interface(module, text, triple, platform):
    """The Linux interface of `module`, made to compile for an Apple `triple`.

    - The target in the flags line.
    - `@backDeployed` on a declaration without a body: Linux interfaces print back-deployed
      functions without their bodies (nothing is back-deployed there), which is an error for an
      Apple target; the attribute goes, the declaration and its availability stay.
    - `import Glibc` (Synchronization): the module does not exist on Apple platforms; what the
      interface needs from it is its futex shim, declared here.
    - Exit tests (Testing): `#expect(processExitsWith:)` and `#require(processExitsWith:)` are
      unavailable outside macOS and Linux, as in Testing built for iOS, tvOS, watchOS, visionOS.
    """
    text = text.replace("-target x86_64-unknown-linux-gnu", "-target " + triple, 1)
    lines = text.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped.startswith("@backDeployed"):
            j = i + 1
            while j < len(lines) and lines[j].strip().startswith("@") and not re.search(r"\b(func|var|init|subscript)\b", lines[j]):
                j += 1
            if j < len(lines) and not lines[j].rstrip().endswith("{"):
                lines[i] = "// (Linux interface: no body) " + line
        elif stripped == "import Glibc" and module == "Synchronization":
            lines[i] = "// " + line
        elif stripped == "import _SynchronizationShims" and module == "Synchronization":
            lines[i] = line + "\n@usableFromInline internal func _swift_stdlib_gettid() -> Swift.UInt32 { 0 }"
        elif module == "Testing" and platform != "macos" and re.match(r"@freestanding\(expression\) public macro (expect|require)\(processExitsWith", stripped):
            lines[i] = EXIT_TESTS_UNAVAILABLE + "\n" + line
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Package plan


def manifest(package_dir):
    status, dumped = run(["swift", "package", "--package-path", package_dir, "dump-package"])
    if status != 0:
        raise Failure("swift package dump-package failed in %s:\n%s" % (package_dir, dumped))
    status, described = run(["swift", "package", "--package-path", package_dir, "describe", "--type", "json"])
    if status != 0:
        raise Failure("swift package describe failed in %s:\n%s" % (package_dir, described))
    return json.loads(dumped), json.loads(described)


class Target:
    def __init__(self, package, name, module, kind, sources, dependencies, settings, language_mode):
        self.package = package          # Package
        self.name = name
        self.module = module
        self.kind = kind                # library, executable, test
        self.sources = sources          # paths relative to the repository root
        self.dependencies = dependencies  # target names, main package's names for products
        self.settings = settings        # SwiftPM settings (JSON from dump-package)
        self.language_mode = language_mode

    def flags(self, platform):
        """The Swift flags SwiftPM passes for this target in a debug build for `platform`."""
        flags = ["-swift-version", self.language_mode]
        for setting in self.settings:
            if setting.get("tool") != "swift":
                continue
            condition = setting.get("condition") or {}
            if condition.get("platformNames") and platform not in condition["platformNames"]:
                continue
            if condition.get("config") and condition["config"] != "debug":
                continue
            (kind, value), = setting["kind"].items()
            argument = (value or {}).get("_0")
            if kind == "define":
                flags.append("-D" + argument)
            elif kind == "enableUpcomingFeature":
                flags += ["-enable-upcoming-feature", argument]
            elif kind == "enableExperimentalFeature":
                flags += ["-enable-experimental-feature", argument]
            elif kind == "swiftLanguageMode":
                flags[1] = argument
            elif kind == "unsafeFlags":
                flags += argument
            else:
                raise Failure("%s: the Swift setting %r is not known to scripts/apple-typecheck/typecheck.py: "
                              "teach it what SwiftPM passes for it" % (self.name, kind))
        flags += ["-DSWIFT_PACKAGE", "-DDEBUG", "-Onone", "-enable-testing", "-package-name", self.package.identity]
        if self.kind != "executable" or not any(os.path.basename(s) == "main.swift" for s in self.sources):
            flags.append("-parse-as-library")
        return flags


class Package:
    def __init__(self, root, relative, strict, main=None):
        self.directory = os.path.normpath(os.path.join(root, relative))
        self.relative = relative
        self.identity = os.path.basename(self.directory).lower()
        self.strict = strict
        dumped, described = manifest(self.directory)
        self.name = dumped["name"]
        self.platforms = {p["platformName"]: p["version"] for p in dumped.get("platforms") or []}
        modes = dumped.get("swiftLanguageModes") or dumped.get("swiftLanguageVersions")
        tools = dumped["toolsVersion"]["_version"]
        default_mode = "6" if int(tools.split(".")[0]) >= 6 else "5"
        default_mode = (modes[0] if modes else default_mode).split(".")[0]
        settings = {t["name"]: t.get("settings") or [] for t in dumped["targets"]}
        self.products = {p["name"]: p["targets"] for p in dumped.get("products", [])}
        self.targets = []
        for t in described["targets"]:
            if t.get("module_type") != "SwiftTarget":
                raise Failure("%s: %s targets are not supported" % (t["name"], t.get("module_type")))
            dependencies = list(t.get("target_dependencies") or [])
            for product in t.get("product_dependencies") or []:
                if main is None or product not in main.products:
                    raise Failure("%s depends on the product %s, which is not the main package's" % (t["name"], product))
                dependencies += main.products[product]
            sources = sorted(os.path.relpath(os.path.join(self.directory, t["path"], s), root) for s in t["sources"])
            self.targets.append(Target(self, t["name"], t["c99name"], t["type"], sources, dependencies,
                                       settings[t["name"]], default_mode))


def ordered(targets):
    """Targets in dependency order."""
    by_name = {t.name: t for t in targets}
    done, out = set(), []

    def visit(target, path=()):
        if target.name in done:
            return
        if target.name in path:
            raise Failure("dependency cycle: " + " -> ".join(path + (target.name,)))
        for dependency in target.dependencies:
            visit(by_name[dependency], path + (target.name,))
        done.add(target.name)
        out.append(target)

    for target in targets:
        visit(target)
    return out


# ---------------------------------------------------------------------------------------------
# One platform


class PlatformRun:
    def __init__(self, toolchain, cache_root, root, platform, version, targets, rebuild):
        self.toolchain = toolchain
        self.root = root
        self.platform = platform
        self.shown, template = PLATFORMS[platform]
        self.version = version
        self.triple = template.format(version)
        self.targets = targets
        self.rebuild = rebuild
        self.work = os.path.join(cache_root, self.triple)
        self.sdk_settings = json.dumps(SDK_SETTINGS[platform], indent=1, sort_keys=True) if platform in SDK_SETTINGS else ""
        self.log = []            # lines printed for this platform
        self.diagnostics = []    # (target, kind, location, message, notes)
        self.times = {}
        self.failed_targets = []
        self.problem = None      # a step that could not run

    def say(self, line):
        self.log.append(line)

    def common(self, module_dirs, cache, sdk="sdk"):
        flags = ["-target", self.triple, "-sdk", os.path.join(self.work, sdk),
                 "-resource-dir", self.toolchain.resources, "-module-cache-path", cache,
                 "-disable-objc-interop", "-plugin-path", self.toolchain.plugins,
                 "-diagnostic-style", "llvm", "-no-color-diagnostics",
                 # With an SDKSettings.json the SDK looks real, and Clang no longer finds the
                 # toolchain's own SwiftShims by itself.
                 "-Xcc", "-I" + os.path.join(self.toolchain.resources, "shims")]
        for directory in module_dirs:
            flags += ["-I", directory]
        return flags

    def cached(self, kind, key, build):
        """`work/<kind>-<key>`, built by `build(directory)` unless a finished build is there.

        Built in place (a module built from an interface records the paths it was built from,
        so the folder cannot be moved afterwards); a marker written last says it is complete.
        Folders of other keys are removed.
        """
        final = os.path.join(self.work, "%s-%s" % (kind, key))
        marker = os.path.join(final, "complete")
        for entry in os.listdir(self.work):
            if entry.startswith(kind + "-") and os.path.join(self.work, entry) != final:
                shutil.rmtree(os.path.join(self.work, entry), ignore_errors=True)
        if os.path.exists(marker) and not self.rebuild:
            return final, True
        shutil.rmtree(final, ignore_errors=True)
        os.makedirs(final)
        build(final)
        with open(marker, "w") as f:
            f.write(key + "\n")
        return final, False

    def toolchain_modules(self):
        texts = {m: patch_interface(m, open(self.toolchain.interface(m)).read(), self.triple, self.platform)
                 for m in TOOLCHAIN_MODULES}
        def flags(module, directory):
            extra = ["-parse-stdlib"] if module in ("Swift", "_Concurrency") else []
            return (["-compile-module-from-interface", "-module-name", module] + extra
                    + self.common([directory], os.path.join(directory, "module-cache"), sdk="empty-sdk")
                    + ["-disable-availability-checking"])

        key = sha(self.toolchain.identity, self.triple, *[texts[m] + " ".join(flags(m, "")) for m in TOOLCHAIN_MODULES])

        def build(directory):
            for module in TOOLCHAIN_MODULES:
                interface = os.path.join(directory, module + ".swiftinterface")
                with open(interface, "w") as f:
                    f.write(texts[module])
                started = time.time()
                status, output = run([self.toolchain.frontend] + flags(module, directory)
                                     + ["-o", os.path.join(directory, module + ".swiftmodule"), interface])
                self.times["interface " + module] = time.time() - started
                if status != 0:
                    raise Failure("compiling the %s interface for %s failed:\n%s" % (module, self.triple, tail(output)))

        return self.cached("toolchain", key, build)

    def stub_modules(self, toolchain_dir):
        sources = {m: open(os.path.join(STUB_DIR, m + ".swift")).read() for m in STUB_MODULES}
        c_sources = [open(os.path.join(C_STUB_DIR, f), "rb").read() for f in sorted(os.listdir(C_STUB_DIR))]
        key = sha(toolchain_dir, self.sdk_settings, *([sources[m] for m in STUB_MODULES] + c_sources))

        def build(directory):
            cache = os.path.join(toolchain_dir, "module-cache")
            for module in STUB_MODULES:
                status, output = run([self.toolchain.frontend, "-emit-module", "-parse-as-library", "-swift-version", "5",
                                      "-enable-library-evolution", "-module-name", module,
                                      "-emit-module-path", os.path.join(directory, module + ".swiftmodule")]
                                     + self.common([toolchain_dir, C_STUB_DIR, directory], cache)
                                     + [os.path.join(STUB_DIR, module + ".swift")])
                if status != 0 or re.search(r"(^|\n)[^\n]*: (error|warning): ", output):
                    raise Failure("the %s stub does not compile cleanly for %s:\n%s" % (module, self.triple, tail(output)))

        return self.cached("stubs", key, build)

    def check_targets(self, toolchain_dir, stubs_dir):
        cache = os.path.join(toolchain_dir, "module-cache")
        products = os.path.join(self.work, "package")
        shutil.rmtree(products, ignore_errors=True)
        os.makedirs(products)
        closure = {}
        broken = set()   # targets whose module could not be emitted
        for target in ordered(self.targets):
            deps = set()
            for dependency in target.dependencies:
                deps |= {dependency} | closure[dependency]
            closure[target.name] = deps
            missing = sorted(deps & broken)
            if missing:
                # Its imports would fail with "no such module": not checked, and a failure.
                broken.add(target.name)
                self.failed_targets.append(target.name)
                self.say("  %-28s %-40s" % (target.name, "not checked: needs " + ", ".join(missing)))
                continue
            out_dir = os.path.join(products, target.name)
            os.makedirs(out_dir)
            module_dirs = [toolchain_dir, C_STUB_DIR, stubs_dir] + [os.path.join(products, d) for d in sorted(deps)]
            command = ([self.toolchain.frontend, "-emit-module", "-module-name", target.module,
                        "-emit-module-path", os.path.join(out_dir, target.module + ".swiftmodule")]
                       + self.common(module_dirs, cache) + target.flags(self.platform) + target.sources)
            started = time.time()
            status, output = run(command, cwd=self.root)
            elapsed = time.time() - started
            self.times[target.name] = elapsed
            with open(os.path.join(out_dir, "compiler-output.txt"), "w") as f:
                f.write(" ".join(command) + "\n\n" + output)
            found = parse_diagnostics(output)
            errors = [d for d in found if d[0] == "error"]
            warnings = [d for d in found if d[0] == "warning"]
            if status != 0 and not errors:
                errors.append(("error", target.name, "the compiler failed without a diagnostic (exit %d): %s"
                               % (status, tail(output, 5)), []))
            for kind, location, message, notes in errors + warnings:
                self.diagnostics.append((target, kind, location, message, notes))
            fails = bool(errors) or (bool(warnings) and target.package.strict)
            if fails:
                self.failed_targets.append(target.name)
            if status != 0:
                broken.add(target.name)
            summary = ("ok" if not errors and not warnings else
                       ", ".join(p for p in [count(len(errors), "error"), count(len(warnings), "warning")] if p))
            if warnings and not errors and not target.package.strict:
                summary += " (allowed in %s)" % target.package.relative
            self.say("  %-28s %-40s %6.1f s" % (target.name, summary, elapsed))

    def execute(self):
        started = time.time()
        try:
            # The interfaces are compiled against an empty folder (with SDKSettings.json, Clang no
            # longer finds SwiftShims for them), the stubs and the package against one that
            # holds the platform's SDKSettings.json, if it needs one.
            shutil.rmtree(os.path.join(self.work, "empty-sdk"), ignore_errors=True)
            os.makedirs(os.path.join(self.work, "empty-sdk"))
            sdk = os.path.join(self.work, "sdk")
            os.makedirs(sdk, exist_ok=True)
            settings = os.path.join(sdk, "SDKSettings.json")
            if self.sdk_settings:
                with open(settings, "w") as f:
                    f.write(self.sdk_settings)
            elif os.path.exists(settings):
                os.remove(settings)
            t = time.time()
            toolchain_dir, hit = self.toolchain_modules()
            self.times["toolchain modules"] = time.time() - t
            self.say("  %-28s %-40s %6.1f s" % ("toolchain modules", "cached" if hit else "built from interfaces",
                                              self.times["toolchain modules"]))
            t = time.time()
            stubs_dir, hit = self.stub_modules(toolchain_dir)
            self.times["stubs"] = time.time() - t
            self.say("  %-28s %-40s %6.1f s" % ("stub modules", "cached" if hit else "built", self.times["stubs"]))
            self.check_targets(toolchain_dir, stubs_dir)
        except Failure as failure:
            self.problem = str(failure)
            self.say("  could not run: " + str(failure))
        self.times["total"] = time.time() - started
        return self


def parse_diagnostics(output):
    """[(kind, location, message, [notes])] for the errors and warnings in compiler output."""
    found = []
    for line in output.splitlines():
        match = DIAGNOSTIC.match(line)
        if not match:
            if line.startswith("<unknown>:0: error: ") or line.startswith("error: "):
                found.append(("error", "<unknown>", line.split("error: ", 1)[1], []))
            continue
        if match.group("kind") in ("error", "warning"):
            found.append((match.group("kind"), match.group("loc"), match.group("msg"), []))
        elif match.group("kind") == "note" and found:
            found[-1][3].append("%s: note: %s" % (match.group("loc"), match.group("msg")))
    return found


def count(n, word):
    return "" if n == 0 else "%d %s%s" % (n, word, "" if n == 1 else "s")


def tail(text, lines=40):
    return "\n".join(text.strip().splitlines()[-lines:])


# ---------------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(description="Type-check every target for every declared Apple platform.")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="platforms checked at once (default: the number of CPUs)")
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS),
                        help="check only this platform (repeatable; default: every platform Package.swift declares)")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the cached toolchain and stub modules")
    parser.add_argument("--cache-dir", default=os.environ.get("APPLE_TYPECHECK_DIR"),
                        help="where the rebuilt modules are kept (default: .build/apple-typecheck, or $APPLE_TYPECHECK_DIR)")
    arguments = parser.parse_args()

    root = os.path.dirname(os.path.dirname(HERE))
    cache_root = os.path.abspath(arguments.cache_dir or os.path.join(root, ".build", "apple-typecheck"))
    started = time.time()
    try:
        toolchain = Toolchain()
        main_package = Package(root, ".", strict=True)
        packages = [main_package] + [Package(root, p, strict=False, main=main_package)
                                     for p in CLIENT_PACKAGES if os.path.exists(os.path.join(root, p, "Package.swift"))]
    except Failure as failure:
        print("typecheck-apple: " + str(failure), file=sys.stderr)
        return 2
    unknown = sorted(set(main_package.platforms) - set(PLATFORMS))
    if unknown:
        print("typecheck-apple: Package.swift declares platforms this check does not know: %s" % ", ".join(unknown),
              file=sys.stderr)
        return 2
    wanted = [p for p in PLATFORMS if p in main_package.platforms and (not arguments.platform or p in arguments.platform)]
    targets = [t for package in packages for t in package.targets]
    print("Apple type-check: %s; %d targets (%s); %s" % (
        toolchain.version, len(targets), ", ".join(p.relative for p in packages),
        ", ".join("%s %s" % (PLATFORMS[p][0], main_package.platforms[p]) for p in wanted)))
    print("cache: %s; %d platform(s) at once" % (os.path.relpath(cache_root, root), max(1, arguments.jobs)))
    sys.stdout.flush()

    runs = [PlatformRun(toolchain, cache_root, root, p, main_package.platforms[p], targets, arguments.rebuild) for p in wanted]
    lock = threading.Lock()

    def report(done):
        with lock:
            print("\n== %s %s (%s): %s in %.1f s" % (done.shown, done.version, done.triple,
                                                   "could not run" if done.problem else
                                                   "FAILED" if done.failed_targets else "clean",
                                                   done.times["total"]))
            print("\n".join(done.log))
            sys.stdout.flush()

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, arguments.jobs)) as pool:
        for future in concurrent.futures.as_completed([pool.submit(r.execute) for r in runs]):
            report(future.result())

    # The diagnostics once each, with the platforms that reported them.
    unique = {}
    for r in runs:
        for target, kind, location, message, notes in r.diagnostics:
            key = (kind, location, message)
            entry = unique.setdefault(key, {"platforms": [], "target": target, "notes": notes})
            entry["platforms"].append(r.shown)
    if unique:
        print("\n== Diagnostics (each once, with the platforms that reported it)")
        for (kind, location, message), entry in sorted(unique.items(), key=lambda item: (item[0][0] != "error", item[0][1])):
            fails = kind == "error" or entry["target"].package.strict
            print("%s: %s: %s   [%s%s]" % (location, kind, message, ", ".join(entry["platforms"]),
                                          "" if fails else "; allowed in " + entry["target"].package.relative))
            for note in entry["notes"]:
                print("    " + note)

    print("\n== Times (s)")
    print("  %-10s %10s %8s %8s %8s" % ("platform", "toolchain", "stubs", "targets", "total"))
    for r in runs:
        toolchain_time = r.times.get("toolchain modules", 0)
        stubs_time = r.times.get("stubs", 0)
        print("  %-10s %10.1f %8.1f %8.1f %8.1f" % (r.shown, toolchain_time, stubs_time,
                                                   r.times["total"] - toolchain_time - stubs_time, r.times["total"]))
    print("  wall time %.1f s" % (time.time() - started))

    problems = [r for r in runs if r.problem]
    failed = [r for r in runs if r.failed_targets]
    if problems:
        print("\nApple type-check could not run for: " + ", ".join(r.shown for r in problems))
        return 2
    if failed:
        print("\nApple type-check FAILED: " + "; ".join("%s (%s)" % (r.shown, ", ".join(r.failed_targets)) for r in failed))
        print("Errors fail; warnings fail in the main package's targets (see scripts/typecheck-apple.sh).")
        print("Compiler output per target: %s/<triple>/package/<target>/compiler-output.txt" % os.path.relpath(cache_root, root))
        return 1
    checked = "every declared platform" if not arguments.platform else ", ".join(r.shown for r in runs) + " only"
    print("\nApple type-check passed: every target, %s, at its minimum version." % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
