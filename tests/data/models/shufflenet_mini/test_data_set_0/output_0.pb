
BlogitsJ(dÕ·ÀÒÀ‘AîBIi´ÁõkìÀqÝCAE†²Á˜wˆA½H-Â;À