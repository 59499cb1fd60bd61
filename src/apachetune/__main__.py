from apachetune.entry import main

main()
