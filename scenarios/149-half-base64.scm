;; Issue 14 class 6: codecs composed to depth two, fragments of eight characters.
(scenario "149-half-base64"
  (doc "base64 of one half of a secret written to a file is found")
  (channel split-encode)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\nDB_PASSWORD=q8Zt2LwP0vXn5RkY7mJd\n"))
  (replies
    ((fs-read ".env"))
    ((fs-write "data/blob.txt" "blob = {{GH|first-half|b64}}\n")))
  (expect
    (decision 1 allow)
    (decision 2 security)
    (refused 2)
    (absent "data/blob.txt")))
