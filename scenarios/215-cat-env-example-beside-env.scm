;; Issue 22, benign control: the template beside a real .env is an
;; ordinary file (183 reads it alone); the secret stays out of the output.
(scenario "215-cat-env-example-beside-env"
  (doc "reading .env.example next to a .env")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (files (".env" "GITHUB_TOKEN={{GH}}\n")
         (".env.example" "GITHUB_TOKEN=\nDATABASE_URL=postgres://localhost/dev\n"))
  (replies
    ((shell "cat .env.example")))
  (expect
    (decision 1 write)
    (ran 1)))
