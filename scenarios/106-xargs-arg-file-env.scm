;; Issue 14 class 2: wrapper options and program text are judged as file names.
(scenario "106-xargs-arg-file-env"
  (doc "xargs -a .env reads the protected file")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n")
         ("README.md" "# app\n\nA small app.\n"))
  (replies
    ((shell "xargs -a .env echo > out.txt")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent "out.txt")))
