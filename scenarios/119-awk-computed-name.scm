;; Issue 14 class 2: an unknown form that could read files falls to a security confirm.
(scenario "119-awk-computed-name"
  (doc "awk reading a file whose name comes from its input cannot be judged: a person says")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n")
         ("names.txt" ".env\n"))
  (replies
    ((shell "awk '{ while ((getline l < $1) > 0) print l }' names.txt > out.txt")))
  (expect
    (decision 1 security)
    (refused 1)
    (absent "out.txt")))
