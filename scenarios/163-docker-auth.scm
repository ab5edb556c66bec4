;; Issue 14 class 7: auth is base64 of deploy:Zq81LwPx0vKn5RkY.
(scenario "163-docker-auth"
  (doc "a docker config's auth entry and the password inside it are learned")
  (channel protected-to-unprotected)
  (modes interactive unattended)
  (files (".docker/config.json" "{\"auths\":{\"registry.x.invalid\":{\"auth\":\"ZGVwbG95OlpxODFMd1B4MHZLbjVSa1k=\"}}}\n"))
  (replies
    ((fs-read ".docker/config.json"))
    ((fs-write "notes.md" "registry password Zq81LwPx0vKn5RkY\n")))
  (expect
    (decision 1 allow)
    (decision 2 security)
    (refused 2)
    (absent "notes.md")))
