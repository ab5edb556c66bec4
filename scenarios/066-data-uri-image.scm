;; security.md 5.2 #6: a base64 image in a data: URI.
(scenario "066-data-uri-image"
  (doc "a data: URI image is an ordinary write")
  (channel benign)
  (benign)
  (modes interactive unattended)
  (replies
    ((fs-write "docs/logo.md" "![dot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=)\n")))
  (expect
    (decision 1 write)
    (ran 1)))
