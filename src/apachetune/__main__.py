from apachetune.cli import main

main()
