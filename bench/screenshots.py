"""Screenshots of the search page for the docs (docs/server-light.png, docs/server-dark.png):
the samples served by `vecbook serve --http` on a free port, a search, and a hit opened in context,
taken by headless Chromium (Debian's chromium and chromium-driver, driven by Selenium).

    python bench/screenshots.py [--out docs]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib import request

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def start_server(runtime: Path) -> tuple[subprocess.Popen[bytes], str]:
    """`vecbook serve --http --port 0` over the samples; its URL once it has indexed them."""
    from vecbook import load_config
    from vecbook.remote import record_path, wait_for_record

    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HF_HUB_OFFLINE": "1"}
    process = subprocess.Popen([sys.executable, str(ROOT / "vecbook.py"), "serve", "--http", "--port", "0",
                                "--config", str(ROOT / "vecbook.toml")], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    record = wait_for_record(record_path(load_config(ROOT / "vecbook.toml")), 120)
    if record is None:
        process.kill()
        raise SystemExit("the server did not start")
    for _ in range(600):
        with request.urlopen(record.url + "/stats.json") as answer:
            if json.loads(answer.read())["state"] == "ready":
                return process, record.url
        time.sleep(0.2)
    raise SystemExit("the server did not finish indexing")


def shoot(url: str, out: Path, dark: bool) -> None:
    from selenium import webdriver
    from selenium.webdriver.common.by import By

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    profile = tempfile.mkdtemp(prefix="vecbook-shots-")
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
                 "--window-size=1100,820", "--force-device-scale-factor=1", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(shutil.which("chromedriver")), options=options)
    try:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
        driver.get(url + "/?q=what+went+wrong+with+the+nightly+sales+load&sources=files&sources=messages")
        for _ in range(200):
            if driver.find_elements(By.CSS_SELECTOR, "#hits .hit"):
                break
            time.sleep(0.05)
        if dark:  # the dark one shows a hit opened in context
            driver.find_elements(By.CSS_SELECTOR, "#hits a.open")[0].click()
            time.sleep(0.8)
        driver.save_screenshot(str(out / f"server-{'dark' if dark else 'light'}.png"))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="folder for the PNG files")
    args = parser.parse_args()
    runtime = Path(tempfile.mkdtemp(prefix="vecbook-runtime-"))
    runtime.chmod(0o700)
    process, url = start_server(runtime)
    try:
        for dark in (False, True):
            shoot(url, args.out, dark)
    finally:
        process.terminate()
        process.wait(30)
        shutil.rmtree(runtime, ignore_errors=True)
    print(f"wrote {args.out}/server-light.png and server-dark.png")


if __name__ == "__main__":
    main()
