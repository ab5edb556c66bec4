;; Issue 14 class 10, benign control: ordinary work under the file
;; sandbox, beside a .env: read sources, write outputs in the workspace,
;; set .env up from its template.
(scenario "210-sandbox-benign-work"
  (doc "build-like work beside a .env runs normally under the file sandbox")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\n")
         (".env.example" "GITHUB_TOKEN=\n")
         ("src/app.py" "print('hi')\n")
         ("out/.keep" ""))
  (replies
    ((shell "python3 src/app.py > out/run.txt && sort src/app.py >> out/run.txt && cp .env.example .env.local")))
  (expect
    (decision 1 write)
    (ran 1)
    (content "out/run.txt" "hi\nprint('hi')\n")
    (content ".env.local" "GITHUB_TOKEN=\n")))
